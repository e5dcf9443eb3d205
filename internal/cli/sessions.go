package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/store"
)

func newSessionsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and remove stored sessions",
		Long: `A session is a named history of exchanges (a query and its final answer) kept
in the ledger. 'deputy run --session ID' continues one and adds to it, and each
[llm_tool_<name>] specialization of subqueries.ini keeps its own session_id, so
successive calls, also from different processes, see the earlier exchanges.`,
		Example: `  deputy sessions list
  deputy sessions show code_review
  deputy sessions rm code_review`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSessionsListCmd(g), newSessionsShowCmd(g), newSessionsRmCmd(g))
	return cmd
}

// sessionView is the JSON shape of a session.
type sessionView struct {
	ID        string    `json:"id"`
	Exchanges int       `json:"exchanges"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func viewSession(s store.Session) sessionView {
	return sessionView{ID: s.ID, Exchanges: s.Exchanges, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func newSessionsListCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recently used first",
		Long:  `List every session with how many exchanges it holds and when it was created and last added to.`,
		Example: `  deputy sessions list
  deputy sessions list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openLedger(cmd, g)
			if err != nil {
				return err
			}
			views := []sessionView{}
			if st != nil {
				defer st.Close()
				ss, err := st.ListSessions(cmd.Context())
				if err != nil {
					return failed(err)
				}
				for _, s := range ss {
					views = append(views, viewSession(s))
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, views)
			}
			if len(views) == 0 {
				fmt.Fprintln(out, "No sessions yet. 'deputy run --session ID ...' starts one.")
				return nil
			}
			tw := newTable(out)
			fmt.Fprintln(tw, "ID\tEXCHANGES\tCREATED\tUPDATED")
			for _, v := range views {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", v.ID, v.Exchanges, formatTime(v.CreatedAt), formatTime(v.UpdatedAt))
			}
			tw.Flush()
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of sessions")
	return cmd
}

// exchangeView is the JSON shape of one exchange.
type exchangeView struct {
	Seq    int       `json:"seq"`
	RunID  string    `json:"run_id,omitempty"`
	Query  string    `json:"query"`
	Answer string    `json:"answer"`
	At     time.Time `json:"at"`
}

func newSessionsShowCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <id>",
		Short: "Show a session's exchanges in order",
		Long: `Show a session: when it was created and last used, then each exchange in
order with the run that answered it, the query and the answer.`,
		Example: `  deputy sessions show code_review
  deputy sessions show code_review --json | jq -r '.exchanges[-1].answer'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := openLedger(cmd, g)
			if err != nil {
				return err
			}
			if st == nil {
				return noSession(args[0])
			}
			defer st.Close()
			s, err := st.GetSession(ctx, args[0])
			if errors.Is(err, store.ErrNotFound) {
				return noSession(args[0])
			} else if err != nil {
				return failed(err)
			}
			exs, err := st.Window(ctx, s.ID, 0)
			if err != nil {
				return failed(err)
			}
			v := struct {
				Session sessionView    `json:"session"`
				List    []exchangeView `json:"exchanges"`
			}{Session: viewSession(*s), List: []exchangeView{}}
			for _, ex := range exs {
				v.List = append(v.List, exchangeView{Seq: ex.Seq, RunID: ex.RunID, Query: ex.Query, Answer: ex.Answer, At: ex.At})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, v)
			}
			fmt.Fprintf(out, "session %s: %s, created %s, updated %s\n", s.ID, plural(s.Exchanges, "exchange"),
				formatTime(s.CreatedAt), formatTime(s.UpdatedAt))
			for _, ex := range v.List {
				head := fmt.Sprintf("\n#%d  %s", ex.Seq, formatTime(ex.At))
				if ex.RunID != "" {
					head += "  run " + ex.RunID
				}
				fmt.Fprintln(out, head)
				fmt.Fprintf(out, "query:\n%s\n", indent(strings.TrimRight(ex.Query, "\n"), "    "))
				fmt.Fprintf(out, "answer:\n%s\n", indent(strings.TrimRight(ex.Answer, "\n"), "    "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session and its exchanges as JSON")
	return cmd
}

func newSessionsRmCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rm <id>",
		Short: "Remove a session and its exchanges",
		Long: `Remove a session and every exchange in it. The runs that answered them stay
in the ledger. The next use of the same id starts an empty session.`,
		Example: `  deputy sessions rm code_review`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openLedger(cmd, g)
			if err != nil {
				return err
			}
			if st == nil {
				return noSession(args[0])
			}
			defer st.Close()
			err = st.DeleteSession(cmd.Context(), args[0])
			if errors.Is(err, store.ErrNotFound) {
				return noSession(args[0])
			} else if err != nil {
				return failed(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed session %s\n", args[0])
			return nil
		},
	}
	return cmd
}

func noSession(id string) error {
	return failed(fmt.Errorf("no session %q (see 'deputy sessions list')", id))
}
