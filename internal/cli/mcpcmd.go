package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/mcp"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve agents over MCP, and list the MCP servers agents use",
		Long: `deputy speaks the Model Context Protocol both ways.

Agents use the tools of MCP servers declared in config.yaml (mcp_servers, or
xzatoma's mcp section), in the project's .mcp.json, or in their own file
(TOML [mcp_servers.<name>], Claude Code mcpServers). The tools appear to the
model as mcp__<server>__<tool>. 'deputy mcp list' shows them.

'deputy mcp serve' makes deputy an MCP server: each agent is a tool that runs
the agent's whole tree. See docs/mcp.md for adding it to Claude Code, Cursor
or Zed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMCPServeCmd(g), newMCPListCmd(g))
	return cmd
}

type mcpServeFlags struct {
	agents      []string
	http        string
	allowRemote bool
	workdir     string
}

func newMCPServeCmd(g *globalFlags) *cobra.Command {
	f := &mcpServeFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve agents as MCP tools (stdio, or streamable HTTP with --http)",
		Long: `Serve agents as tools of an MCP server. Each agent is one tool, named after
the agent and described by its description, taking {task, context}. A call
runs the agent's whole tree, as 'deputy run' would, and answers with the final
text (and the structured result of an agent with an output schema). The tree's
events are sent as progress notifications to a client that asks for them, and
a cancelled call stops the tree; the ledger records every run. Approvals that
permission rules ask for and ask_user questions, from any agent of the tree,
are put to the client's user as MCP elicitation; with a client that cannot
elicit, nobody is there and they are refused at once (docs/mcp.md).

By default the server speaks over stdin and stdout, the way MCP hosts start
their servers; --http ADDR serves streamable HTTP at http://ADDR/mcp instead.
The server has no authentication, so --http listens on loopback addresses only
unless --allow-remote is given.`,
		Example: `  deputy mcp serve
  deputy mcp serve --agent reviewer --agent lead
  deputy mcp serve --http 127.0.0.1:7331`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serveMCP(cmd, g, f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.agents, "agent", nil, "offer this agent (repeatable; default: every agent that can run)")
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on this host:port instead of stdio")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow --http on a non-loopback address (the server has no authentication)")
	fl.StringVar(&f.workdir, "workdir", "", "working directory of the agents (default: the current directory)")
	return cmd
}

func serveMCP(cmd *cobra.Command, g *globalFlags, f *mcpServeFlags) error {
	if f.http != "" {
		host, _, err := net.SplitHostPort(f.http)
		if err != nil {
			return configErr(fmt.Errorf("--http %q: want host:port, such as 127.0.0.1:7331: %w", f.http, err))
		}
		if !f.allowRemote && !loopbackHost(host) {
			return configErrf("--http %q is not a loopback address; the server has no authentication, so give --allow-remote to listen there anyway", f.http)
		}
	}
	w, err := loadWorkspace(cmd, g)
	if err != nil {
		return err
	}
	defer w.Close()
	agents, err := servedAgents(w, f.agents)
	if err != nil {
		return err
	}
	workdir := w.Dir
	if f.workdir != "" {
		workdir = f.workdir
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	ledger, err := w.OpenLedger(ctx)
	if err != nil {
		return err
	}
	defer ledger.Close()
	server, err := mcp.NewServer(mcp.ServerOptions{
		Engine:  func(l ...delegate.Listener) *delegate.Engine { return w.Engine(ledger, l...) },
		Agents:  agents,
		Workdir: workdir,
		Version: buildVersion(debug.ReadBuildInfo()).Version,
	})
	if err != nil {
		return err
	}
	if f.http == "" {
		err := server.Run(ctx, &sdk.StdioTransport{})
		if err != nil && ctx.Err() == nil && !errors.Is(err, sdk.ErrConnectionClosed) {
			return fmt.Errorf("mcp serve: %w", err)
		}
		return nil
	}
	ln, err := net.Listen("tcp", f.http)
	if err != nil {
		return configErr(fmt.Errorf("--http %s: %w", f.http, err))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	fmt.Fprintf(cmd.ErrOrStderr(), "deputy mcp serving %d agents on http://%s/mcp\n", len(agents), ln.Addr())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}

// servedAgents are the agents named, or every agent that can run (those
// with errors are left out with a warning).
func servedAgents(w *cliWorkspace, names []string) ([]*config.Agent, error) {
	var out []*config.Agent
	if len(names) > 0 {
		for _, n := range names {
			a, err := w.agent(n)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		return out, nil
	}
	for _, listed := range w.Agents.List() {
		a, _, err := w.Agent(listed.Name)
		if err != nil {
			fmt.Fprintf(w.stderr, "deputy: warning: agent %q is not served: %v\n", listed.Name, firstLine(err.Error()))
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, configErrf("no agent to serve (see 'deputy agents list')")
	}
	return out, nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func newMCPListCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers agents may use, their state and their tools",
		Long: `List every configured MCP server: those of config.yaml and .mcp.json (for
every agent) and those agent files declare (for that agent). Each server is
started to ask for its tools, then stopped; its state is "running" when it
answered and "failed" (with the reason and the end of its stderr) when not.`,
		Example: `  deputy mcp list
  deputy mcp list --json | jq '.[] | {name, state}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := loadWorkspace(cmd, g)
			if err != nil {
				return err
			}
			defer w.Close()
			type entry struct {
				cfg config.MCPServer
				who string
			}
			var entries []entry
			for _, s := range w.MCP.Servers() {
				entries = append(entries, entry{s, "all agents"})
			}
			for _, a := range w.Agents.List() {
				for _, s := range a.MCPServers {
					if !s.Ref {
						entries = append(entries, entry{s, "agent " + a.Name})
					}
				}
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			var rows []mcpListJSON
			for _, e := range entries {
				st := w.MCP.Probe(ctx, []config.MCPServer{e.cfg})[0]
				row := mcpListJSON{Name: e.cfg.Name, Transport: e.cfg.Transport, For: e.who, Origin: e.cfg.Origin, State: st.State, Error: st.Err}
				for _, t := range st.Tools {
					row.Tools = append(row.Tools, mcpToolJSON(t))
				}
				rows = append(rows, row)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if rows == nil {
					rows = []mcpListJSON{}
				}
				return writeJSON(out, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(out, "No MCP servers are configured (see docs/mcp.md).")
				return nil
			}
			for i, r := range rows {
				if i > 0 {
					fmt.Fprintln(out)
				}
				fmt.Fprintf(out, "%s (%s, for %s, %s): %s\n", r.Name, r.Transport, r.For, r.Origin, r.State)
				if r.Error != "" {
					for _, l := range strings.Split(r.Error, "\n") {
						fmt.Fprintf(out, "  %s\n", l)
					}
				}
				tw := newTable(out)
				for _, t := range r.Tools {
					fmt.Fprintf(tw, "  %s\t%s\n", t.Name, firstLine(t.Description))
				}
				tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

type mcpListJSON struct {
	Name      string        `json:"name"`
	Transport string        `json:"transport"`
	For       string        `json:"for"`
	Origin    string        `json:"origin,omitempty"`
	State     string        `json:"state"`
	Error     string        `json:"error,omitempty"`
	Tools     []mcpToolJSON `json:"tools,omitempty"`
}

type mcpToolJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}
