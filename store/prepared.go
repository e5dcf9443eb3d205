package store

// preparedWrites are the statements every recording repeats; the writer prepares
// them once on its connection instead of once per write.
var preparedWrites = []string{
	insertRun,
	finishRun,
	insertMessage,
	nextMessageSeq,
	insertEvent,
	bumpSession,
	insertExchange,
}
