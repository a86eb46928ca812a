package main

import (
	"bytes"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

// templates holds the files `plugin new` writes: templates/<lang>/ for each
// language and templates/README.md.tmpl for all of them.
//
//go:embed templates
var templates embed.FS

// errNoPDK is returned by `plugin new` when the plugin kit cannot be found.
var errNoPDK = errors.New("plugin kit not found")

// pluginNameRe is the manifest's rule for integration names.
var pluginNameRe = regexp.MustCompile(`^[a-z][a-z0-9-]{1,39}$`)

// pluginLanguage is one language `plugin new` and `plugin build` know.
type pluginLanguage struct {
	name  string // as given to --lang and as the templates folder
	title string
	// marker is a file of the kit's folder that identifies it.
	marker string
}

var pluginLanguages = []pluginLanguage{
	{"go", "Go", "go.mod"},
	{"assemblyscript", "AssemblyScript", "package.json"},
	{"c", "C", "plugin.mk"},
	{"rust", "Rust", "src/lib.rs"},
}

func languageNames() string {
	var names []string
	for _, l := range pluginLanguages {
		names = append(names, l.name)
	}
	return strings.Join(names, "|")
}

func findLanguage(name string) (pluginLanguage, bool) {
	i := slices.IndexFunc(pluginLanguages, func(l pluginLanguage) bool { return l.name == name })
	if i < 0 {
		return pluginLanguage{}, false
	}
	return pluginLanguages[i], true
}

func pluginNewCommand() *command {
	return &command{
		name:     "plugin new",
		synopsis: "--lang " + languageNames() + " [--dir DIR] [--pdk PATH] NAME",
		summary: "Create a plugin folder for integration NAME: a manifest with the tools NAME_hello\n" +
			"and NAME_status (which calls the API through http_request), the build file, a\n" +
			".gitignore and a test (Go) or a README explaining `workbench plugin call`.\n" +
			"The kit is referenced by a path relative to the folder.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			lang := fs.String("lang", "", "plugin language: "+languageNames())
			dir := fs.String("dir", "", "folder to create; must not exist or be empty (default ./NAME)")
			pdk := fs.String("pdk", "", "the language's plugin kit (default pdk/<lang> in this or a parent folder)")
			return func(e *env, args []string) int {
				if len(args) != 1 {
					return usageError(e, fs, "want exactly one argument, the integration name")
				}
				l, ok := findLanguage(*lang)
				if !ok {
					return usageError(e, fs, "--lang %q: want one of %s", *lang, languageNames())
				}
				name := args[0]
				if !pluginNameRe.MatchString(name) {
					return usageError(e, fs, "name %q: want 2 to 40 lowercase letters, digits and '-', starting with a letter", name)
				}
				target := *dir
				if target == "" {
					target = name
				}
				if err := newPlugin(e, l, name, target, *pdk); err != nil {
					return commandFailed(e, "plugin new", err)
				}
				fmt.Fprintf(e.stdout, "created %s (%s); build it with: workbench plugin build %s\n", target, l.title, target)
				return exitOK
			}
		},
	}
}

// scaffoldData is what the templates see.
type scaffoldData struct {
	Name      string // integration name
	Ident     string // Name with '-' as '_': the slug prefix and identifiers
	Lang      string
	LangTitle string
	PDK       string // the kit, relative to the plugin folder, with '/'
	GoVersion string // the go directive of the Go kit's go.mod
}

// newPlugin writes the plugin folder dir for integration name in language l.
func newPlugin(e *env, l pluginLanguage, name, dir, pdk string) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(absDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	kit, err := findPDK(l, pdk, wd)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(absDir, kit)
	if err != nil {
		return fmt.Errorf("kit %s: %w", kit, err)
	}
	data := scaffoldData{Name: name, Ident: strings.ReplaceAll(name, "-", "_"), Lang: l.name, LangTitle: l.title, PDK: filepath.ToSlash(rel)}
	if l.name == "go" {
		if data.GoVersion, err = goDirective(filepath.Join(kit, "go.mod")); err != nil {
			return err
		}
	}
	files := map[string]string{"README.md": "templates/README.md.tmpl"}
	root := "templates/" + l.name
	err = fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		out := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		if path.Base(out) == "gitignore" {
			out = path.Join(path.Dir(out), ".gitignore")
		}
		files[out] = p
		return nil
	})
	if err != nil {
		return err
	}
	for out, src := range files {
		if err := writeTemplate(filepath.Join(absDir, filepath.FromSlash(out)), src, data); err != nil {
			return err
		}
	}
	if l.name == "assemblyscript" {
		linkNodeModules(e, absDir, kit)
	}
	return nil
}

// findPDK returns the absolute path of the language's kit: flagValue when
// given, else pdk/<lang> in the folder wd or the nearest parent that has one.
func findPDK(l pluginLanguage, flagValue, wd string) (string, error) {
	isKit := func(dir string) bool { return fileExists(filepath.Join(dir, filepath.FromSlash(l.marker))) }
	if flagValue != "" {
		abs, err := filepath.Abs(flagValue)
		if err != nil {
			return "", err
		}
		if !isKit(abs) {
			return "", fmt.Errorf("--pdk %s: %w: no %s there", flagValue, errNoPDK, l.marker)
		}
		return abs, nil
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if kit := filepath.Join(dir, "pdk", l.name); isKit(kit) {
			return kit, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%w: no pdk/%s in %s or any parent folder; run inside the Workbench repository or pass --pdk", errNoPDK, l.name, wd)
		}
	}
}

// goDirective returns the go version a go.mod file declares.
func goDirective(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s has no go directive", gomod)
}

// writeTemplate renders the embedded template src with data to out. The
// templates use [[ ]] as delimiters, since C, Rust and Go code all use braces.
func writeTemplate(out, src string, data scaffoldData) error {
	text, err := templates.ReadFile(src)
	if err != nil {
		return err
	}
	tmpl, err := template.New(path.Base(src)).Delims("[[", "]]").Option("missingkey=error").Parse(string(text))
	if err != nil {
		return fmt.Errorf("template %s: %w", src, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return fmt.Errorf("template %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// linkNodeModules links the AssemblyScript compiler and the kit into the
// new plugin's node_modules from the kit's own installation, so the plugin
// builds without a network. When the kit has no compiler installed, `plugin
// build` runs npm install instead.
func linkNodeModules(e *env, dir, kit string) {
	asc := filepath.Join(kit, "node_modules", "assemblyscript")
	if !fileExists(filepath.Join(asc, "bin", "asc.js")) {
		fmt.Fprintf(e.stderr, "workbench plugin new: %s has no compiler installed; `plugin build` will run npm install\n", kit)
		return
	}
	links := map[string]string{
		filepath.Join(dir, "node_modules", "assemblyscript"):                   asc,
		filepath.Join(dir, "node_modules", "@workbench", "pdk-assemblyscript"): kit,
	}
	for link, target := range links {
		rel, err := filepath.Rel(filepath.Dir(link), target)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(link), 0o755)
		}
		if err == nil {
			err = os.Symlink(rel, link)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "workbench plugin new: linking %s: %v; `plugin build` will run npm install\n", link, err)
			os.RemoveAll(filepath.Join(dir, "node_modules"))
			return
		}
	}
}
