package mcp

// Expand is expand, for tests.
var Expand = expand
