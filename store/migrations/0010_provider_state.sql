-- 0010: a provider's opaque state of each turn, and the model's thinking.
--
-- Today's models require parts of an assistant turn back, unchanged, in the
-- next request of the same conversation: Anthropic's thinking blocks and
-- their signatures, OpenAI's reasoning items, Gemini's thought signatures
-- (llm.Message.State). A run resumed from the ledger, a session replayed
-- and a conversation carried through Temporal must send them back as they
-- came, so the ledger keeps them with the message.
--
-- messages.state is the JSON of the message's llm.State ({"format",
-- "model", "data"}), NULL when it has none; messages.reasoning is the
-- readable summary of the model's thinking on that turn, shown to whoever
-- watches and never part of a result. exchanges.answer_state is the state
-- of the model's turn that gave a session's answer, replayed with it.
--
-- reasoning_tokens count the output tokens the model spent thinking, where
-- the provider reports them (a part of output_tokens, billed as output),
-- per model call and per run, own and tree's. Rows recorded before this
-- step have none of these.
ALTER TABLE messages ADD COLUMN state TEXT;
ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE exchanges ADD COLUMN answer_state TEXT;
ALTER TABLE runs ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tree_reasoning_tokens INTEGER NOT NULL DEFAULT 0;
