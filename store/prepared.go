package store

// preparedWrites are the statements every recording repeats; the writer prepares
// each on its connection the first time it runs, instead of once per write.
// (The queries a write makes, nextMessageSeq and bumpSession, are rare: a
// library caller's message without a sequence number, a session's exchange.)
var preparedWrites = []string{
	insertRun,
	insertStartingRunSQL,
	finishRun,
	insertMessage,
	insertTextMessage,
	insertEvent,
	insertExchange,
}
