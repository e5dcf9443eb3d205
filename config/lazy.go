package config

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/config/internal/text"
)

// OpenAgents returns the agents of dirs (in precedence order, lowest
// first, as for LoadAgents) as a set that loads an agent's file only when
// the agent is first asked for by name (Get): what a run needs, its agent
// and those it calls, whatever else is installed. Which file defines a
// name is read from the file's head once and remembered in an index kept
// at indexPath ("" keeps none), keyed by path, size and modification
// time, so a later run only lists the directories and looks at each file's
// size and time. List and the other methods that see every agent load
// them all first, as LoadAgents does.
//
// The set checks each file as it loads it; LoadDiagnostics returns what
// it found so far. Sub-agents that no file defines are not reported (Lint
// of the agents a run uses does that).
func OpenAgents(dirs []Dir, opts LoadOptions, indexPath string) *AgentSet {
	opts.InDirectory = true
	s := NewAgentSet()
	s.lazy = &lazySet{dirs: dirs, opts: opts, index: readIndex(indexPath), indexPath: indexPath,
		scanned: make([]map[string][]string, len(dirs)), tried: map[string]bool{}}
	return s
}

// lazySet is what an OpenAgents set needs to find agents by name.
type lazySet struct {
	mu        sync.Mutex
	dirs      []Dir
	opts      LoadOptions
	index     *agentIndex
	indexPath string
	// scanned holds, for each dir once listed, the files each name (or
	// file stem, prefixed with "/") is defined in, in load order.
	scanned []map[string][]string
	tried   map[string]bool // files loaded
	all     bool            // everything loaded (List and the like)
	diags   Diagnostics
}

// names lists dir i's files and the names each defines, reading the
// index, and the head of each file it does not know as it is.
func (l *lazySet) names(i int) map[string][]string {
	if l.scanned[i] != nil {
		return l.scanned[i]
	}
	d := l.dirs[i]
	byName := map[string][]string{}
	l.scanned[i] = byName
	paths, _, err := d.files()
	if err != nil {
		return byName
	}
	l.index.listed(d.Path, paths)
	for _, p := range paths {
		for _, n := range l.index.names(p, d.Origin) {
			byName[n] = append(byName[n], p)
		}
		stem := "/" + fileStem(p)
		byName[stem] = append(byName[stem], p)
	}
	return byName
}

// find loads the agent called name, or failing that the one whose file
// is name.toml or name.md, from the highest-precedence directory that has
// it. It reports whether it loaded one.
func (l *lazySet) find(s *AgentSet, name string) bool {
	defer l.index.save(l.indexPath)
	for _, key := range []string{name, "/" + name} {
		for i := len(l.dirs) - 1; i >= 0; i-- {
			for _, p := range l.names(i)[key] {
				if l.load(s, i, p, name, key != name) {
					return true
				}
			}
		}
	}
	return false
}

// load loads the file p of dir i, unless it was, and adds its agent
// called name (or, byStem, its agent when p's stem is name) to s; its
// other agents are left for their own lookups, which know their
// precedence.
func (l *lazySet) load(s *AgentSet, i int, p, name string, byStem bool) bool {
	if l.tried[p] {
		// Loaded before, for another name: found if it gave this one.
		for _, a := range s.agents {
			if a.Path == p && (a.Name == name || byStem) {
				return true
			}
		}
		return false
	}
	d := l.dirs[i]
	if !byStem && !l.index.current(p, d.Origin, name) {
		return false // the file changed, and no longer names it
	}
	l.tried[p] = true
	agents, diags := d.load(p, l.opts)
	if len(agents) == 0 && diags.HasErrors() {
		s.addBroken(BrokenFile{Path: p, Source: d.Source, Diagnostics: diags})
	}
	found := false
	for _, a := range agents {
		if a.Name != name && !byStem || a.Disabled != "" {
			continue
		}
		l.resolveOptional(a)
		s.Add(a)
		found = true
	}
	if found || len(agents) == 0 {
		l.diags = append(l.diags, diags...)
	}
	return found
}

// resolveOptional does for one agent what resolveOptional does for a
// loaded set: its optional sub-agents no file defines are left out, with
// a warning, and those its patterns match are added, among the names of
// the directories of its source.
func (l *lazySet) resolveOptional(a *Agent) {
	var unknown []string
	for _, n := range a.Optional.Names {
		if !l.defined(n, "") {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		a.Subagents = slices.DeleteFunc(a.Subagents, func(n string) bool { return slices.Contains(unknown, n) })
		sink := &Sink{File: a.Path}
		sink.Warnf(a.KeyLine(a.Optional.Key), a.Optional.Key, "%s names %s, which no agent file defines; left out", a.Optional.Form, text.QuoteList(unknown))
		l.diags = append(l.diags, sink.Diags...)
	}
	if len(a.Optional.Patterns) == 0 {
		return
	}
	var matched []string
	for i, d := range l.dirs {
		if d.Source != a.Source {
			continue
		}
		for n := range l.names(i) {
			if n == a.Name || strings.HasPrefix(n, "/") || slices.Contains(a.Subagents, n) || slices.Contains(matched, n) {
				continue
			}
			if slices.ContainsFunc(a.Optional.Patterns, func(p string) bool { ok, _ := path.Match(p, n); return ok }) {
				matched = append(matched, n)
			}
		}
	}
	slices.Sort(matched) // as LoadAgents adds them: by name
	a.Subagents = append(a.Subagents, matched...)
}

// defined reports whether some directory's file defines name (of source,
// when that is not "").
func (l *lazySet) defined(name, source string) bool {
	for i, d := range l.dirs {
		if source != "" && d.Source != source {
			continue
		}
		if len(l.names(i)[name]) > 0 {
			return true
		}
	}
	return false
}

// loadAll loads every file as LoadAgents does, once.
func (l *lazySet) loadAll(s *AgentSet) {
	if l.all {
		return
	}
	l.all = true
	full, diags := LoadAgents(l.dirs, l.opts)
	s.agents, s.shadowed, s.broken, s.ranks = full.agents, full.shadowed, full.broken, full.ranks
	l.diags = diags
}

// agentIndex is the names each agent file defines, by path, known for
// the size and modification time the file had when it was read. Listing
// a directory finds its new and removed files; a file the index knows is
// looked at (its size and time) only when it is the one a name leads to,
// so a run with many agents installed reads one line each. A name the
// index cannot know (a file edited in place to take another's name) is
// found by Get's fallback, which reads every file; agents list and lint
// always read every file.
type agentIndex struct {
	files map[string]indexEntry
	dirty bool
}

type indexEntry struct {
	size, mtime int64 // mtime in Unix nanoseconds
	names       []string
	checked     bool // looked at in this process
}

// indexHeader starts the index file; it changes when what is indexed
// (how names are read) does.
const indexHeader = "deputy agent index 1\n"

// maxIndexFile bounds the index file read.
const maxIndexFile = 64 << 20

// readIndex reads the index at p: after its header, one line a file,
// "size<TAB>mtime<TAB>path<TAB>name,name".
func readIndex(p string) *agentIndex {
	ix := &agentIndex{files: map[string]indexEntry{}}
	if p == "" {
		return ix
	}
	data, err := osfile.Read(p, maxIndexFile)
	if err != nil {
		return ix
	}
	rest, ok := strings.CutPrefix(string(data), indexHeader)
	if !ok {
		return ix
	}
	for line := range strings.Lines(rest) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 4 {
			continue
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		mtime, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		var names []string
		if f[3] != "" {
			names = strings.Split(f[3], ",")
		}
		ix.files[f[2]] = indexEntry{size: size, mtime: mtime, names: names}
	}
	return ix
}

// listed drops the files of dir the index knows that a listing of it no
// longer has.
func (ix *agentIndex) listed(dir string, paths []string) {
	prefix := dir + string(filepath.Separator)
	has := make(map[string]bool, len(paths))
	for _, p := range paths {
		has[p] = true
	}
	for p := range ix.files {
		if strings.HasPrefix(p, prefix) && !has[p] {
			delete(ix.files, p)
			ix.dirty = true
		}
	}
}

// names are the names the file p defines: the index's, or read from the
// head of a file it does not know.
func (ix *agentIndex) names(p string, o Origin) []string {
	if e, ok := ix.files[p]; ok {
		return e.names
	}
	return ix.read(p, o)
}

// current reports whether the file p, as it is now, names name: its
// size and time are the index's, or read again it does.
func (ix *agentIndex) current(p string, o Origin, name string) bool {
	e, ok := ix.files[p]
	if !ok || !e.checked {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		if !ok || e.size != fi.Size() || e.mtime != fi.ModTime().UnixNano() {
			ix.read(p, o)
		}
		e = ix.files[p]
		e.checked = true
		ix.files[p] = e
	}
	return slices.Contains(e.names, name)
}

// read reads the names of the file p from its head, by its origin when
// that reads names itself, and indexes them.
func (ix *agentIndex) read(p string, o Origin) []string {
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	data, err := osfile.ReadPrefix(p, maxAgentFileSize)
	if err != nil {
		return nil
	}
	var names []string
	if n, ok := o.(nameReader); ok {
		names = n.Names(p, data)
	} else {
		names = FileNames(p, data)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return strings.ContainsAny(n, ",\t\n") })
	ix.files[p] = indexEntry{size: fi.Size(), mtime: fi.ModTime().UnixNano(), names: names, checked: true}
	ix.dirty = true
	return names
}

// nameReader is an Origin that reads the names its files define itself
// (opencode.json's agent section).
type nameReader interface {
	Names(path string, data []byte) []string
}

// save writes the index to p when it changed; an index that cannot be
// written is only slower next time.
func (ix *agentIndex) save(p string) {
	if p == "" || !ix.dirty {
		return
	}
	ix.dirty = false
	var b strings.Builder
	b.WriteString(indexHeader)
	for _, path := range slices.Sorted(maps.Keys(ix.files)) {
		if strings.ContainsAny(path, "\t\n") {
			continue
		}
		e := ix.files[path]
		fmt.Fprintf(&b, "%d\t%d\t%s\t%s\n", e.size, e.mtime, path, strings.Join(e.names, ","))
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".agent-index-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(b.String())
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// FileNames are the names an agent file of deputy's formats defines, read
// from its head without parsing it: the name key (a TOML file's before its
// first table; a Markdown file's front matter's), else its file's name.
// A name the full reading would not take ("Python Expert") gives the
// file's name, as that reading does in Markdown.
func FileNames(p string, data []byte) []string {
	stem := fileStem(p)
	var name string
	switch strings.ToLower(filepath.Ext(p)) {
	case ".toml":
		name = tomlName(string(data))
	case ".md":
		front, _, _, has, err := splitFrontMatter(string(data))
		if !has || err != nil {
			return nil
		}
		name = frontMatterName(front)
		if name != "" && ValidAgentName(name) != nil {
			name = stem
		}
	}
	if name == "" {
		name = stem
	}
	if name == "" {
		return nil
	}
	return []string{name}
}

// tomlName is the value of a top-level name = "..." line.
func tomlName(src string) string {
	for line := range strings.Lines(src) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			return ""
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok || strings.TrimSpace(k) != "name" {
			continue
		}
		return unquote(strings.TrimSpace(v))
	}
	return ""
}

// frontMatterName is the value of a top-level name: line.
func frontMatterName(front string) string {
	for line := range strings.Lines(front) {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "name" {
			return unquote(strings.TrimSpace(v))
		}
	}
	return ""
}

// unquote strips a value's quotes and a trailing comment.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return v[1 : end+1]
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}
