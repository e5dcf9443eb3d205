package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deputyhq/deputy/config/internal/osfile"
)

// skillFileName is the file a skill directory holds.
const skillFileName = "SKILL.md"

// maxSkillSize bounds a SKILL.md; a skill is prompt text, and a bigger file
// is a mistake (or a device file) rather than a skill.
const maxSkillSize = 1 << 20

// Skill is a SKILL.md: optional front matter (name, description) and the
// instructions in its body.
type Skill struct {
	Name        string
	Description string
	Body        string
	Path        string
}

// ErrSkillNotFound is matched (errors.Is) by the error of a skill
// reference that resolves to no file.
var ErrSkillNotFound = errors.New("skill not found")

// skillNotFoundError says which skill was missing and where deputy looked.
type skillNotFoundError struct {
	Ref    string
	Looked []string
}

func (e *skillNotFoundError) Error() string {
	return fmt.Sprintf("skill %q not found (looked in %s)", e.Ref, strings.Join(e.Looked, ", "))
}

// Is makes errors.Is(err, ErrSkillNotFound) true.
func (e *skillNotFoundError) Is(target error) bool { return target == ErrSkillNotFound }

// ResolveSkill finds and reads the skill ref names.
//
// ref is either a path to a SKILL.md or to a directory holding one, or a
// bare name. A path is absolute, or relative to baseDir (the directory of
// the file that names the skill), then to each of searchDirs (as axe reads
// "skills/x/SKILL.md" from its config directory). A bare name (no slash,
// not ending in .md) is also looked up as <dir>/skills/<name>/SKILL.md in
// each of searchDirs, in order. The first match wins.
func ResolveSkill(ref, baseDir string, searchDirs []string) (*Skill, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, errors.New("empty skill reference")
	}
	p := osfile.ExpandHome(ref)
	var candidates []string
	if filepath.IsAbs(p) {
		candidates = append(candidates, p)
	} else {
		if baseDir != "" {
			candidates = append(candidates, filepath.Join(baseDir, p))
		}
		bare := !strings.ContainsAny(ref, `/\`) && !strings.HasSuffix(strings.ToLower(ref), ".md")
		for _, d := range searchDirs {
			if bare {
				candidates = append(candidates, filepath.Join(d, "skills", ref, skillFileName))
			} else {
				candidates = append(candidates, filepath.Join(d, p))
			}
		}
	}
	var looked []string
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		looked = append(looked, c)
		file, ok := skillFile(c)
		if !ok {
			continue
		}
		return loadSkill(file)
	}
	return nil, &skillNotFoundError{Ref: ref, Looked: looked}
}

// skillFile returns the SKILL.md that path denotes: path itself when it is
// a regular file, path/SKILL.md when it is a directory holding one.
func skillFile(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		path = filepath.Join(path, skillFileName)
		if fi, err = os.Stat(path); err != nil {
			return "", false
		}
	}
	return path, fi.Mode().IsRegular()
}

// loadSkill reads and parses the SKILL.md at path.
func loadSkill(path string) (*Skill, error) {
	data, err := osfile.Read(path, maxSkillSize)
	if err != nil {
		return nil, fmt.Errorf("reading skill %s: %w", path, err)
	}
	return parseSkill(data, path)
}

// parseSkill parses a SKILL.md. Front matter is optional; of its keys only
// name and description are read (others, such as license or
// allowed-tools, belong to other runners and are ignored). A skill without
// a name is named after its directory.
func parseSkill(data []byte, path string) (*Skill, error) {
	front, body, offset, has, err := splitFrontMatter(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Skill{Path: path, Body: strings.TrimSpace(body)}
	if has {
		var meta struct {
			Name        string `yaml:"name"`
			Description string `yaml:"description"`
		}
		if err := yaml.Unmarshal([]byte(front), &meta); err != nil {
			line, msg := yamlErrorLine(err)
			if line > 0 {
				return nil, fmt.Errorf("%s:%d: invalid YAML front matter: %s", path, line+offset, msg)
			}
			return nil, fmt.Errorf("%s: invalid YAML front matter: %s", path, msg)
		}
		s.Name, s.Description = strings.TrimSpace(meta.Name), strings.TrimSpace(meta.Description)
	}
	if s.Name == "" && path != "" {
		if filepath.Base(path) == skillFileName {
			s.Name = filepath.Base(filepath.Dir(path))
		} else {
			s.Name = fileStem(path)
		}
	}
	return s, nil
}
