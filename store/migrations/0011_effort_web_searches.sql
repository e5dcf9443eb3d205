-- 0011: a root's reasoning effort, and the searches of each model call.
--
-- runs.effort is, on a root, the reasoning effort it was started with (run
-- --effort, else its agent's), so that runs resume goes on with it rather
-- than with what the agent file says now; its children that set none
-- inherit it again. '' on children and on roots recorded before this step.
--
-- messages.web_searches counts the searches the provider's own web search
-- ran in the model call that produced the message (llm.Usage.WebSearches),
-- which providers bill per search: a resumed run counts what they cost
-- before it was interrupted.
ALTER TABLE runs ADD COLUMN effort TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN web_searches INTEGER NOT NULL DEFAULT 0;
