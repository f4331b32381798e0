package flagconf

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Flags are the flags about the configuration itself; they are not keys
// of the file.
type Flags struct {
	// File is --config, the TOML file ("" for none).
	File string
	// Print is --print-config: print the effective configuration and exit.
	Print bool
}

// Register adds --config and --print-config to fs.
func (c *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.File, "config", "", "TOML file of serve settings, one key per flag (e.g. max-body = \"4MiB\"); command-line flags, then WASMCP_* environment variables, override it")
	fs.BoolVar(&c.Print, "print-config", false, "print the effective configuration (secrets masked) as TOML and exit")
}

// envPrefix starts the environment variable of a flag.
const envPrefix = "WASMCP_"

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// configSource is where a setting came from.
type configSource string

const (
	fromDefault configSource = "default"
	fromFlag    configSource = "flag"
	fromEnv     configSource = "env"
	fromFile    configSource = "file"
)

// Config is the resolved configuration of a flag set.
type Config struct {
	fs      *flag.FlagSet
	sources map[string]configSource
	// EnvUsed names the environment variables applied, for the log.
	EnvUsed []string
}

// notKeys are the flags that are not settings.
var notKeys = map[string]bool{"config": true, "print-config": true}

// Resolve fills the flags of fs that the command line did not set from
// the environment (lookup) and from c.File; call it after fs.Parse.
func (c *Flags) Resolve(fs *flag.FlagSet, lookup func(string) (string, bool)) (*Config, error) {
	cfg := &Config{fs: fs, sources: map[string]configSource{}}
	fs.VisitAll(func(f *flag.Flag) { cfg.sources[f.Name] = fromDefault })
	fs.Visit(func(f *flag.Flag) { cfg.sources[f.Name] = fromFlag })
	var file map[string]fileValue
	if c.File != "" {
		var err error
		if file, err = readConfigFile(c.File, fs); err != nil {
			return nil, err
		}
	}
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if notKeys[f.Name] || cfg.sources[f.Name] == fromFlag {
			return
		}
		if v, ok := lookup(envName(f.Name)); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", envName(f.Name), v, err))
				return
			}
			cfg.sources[f.Name] = fromEnv
			cfg.EnvUsed = append(cfg.EnvUsed, envName(f.Name))
			return
		}
		if v, ok := file[f.Name]; ok {
			if err := fs.Set(f.Name, v.text); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: key %s = %q: %w", c.File, v.line, v.key, v.text, err))
				return
			}
			cfg.sources[f.Name] = fromFile
		}
	})
	return cfg, errors.Join(errs...)
}

// fileValue is one setting of the config file, as the flag's text.
type fileValue struct {
	key  string // as written
	text string
	line int
}

// readConfigFile reads a flat TOML file whose keys are the flags of fs.
func readConfigFile(path string, fs *flag.FlagSet) (map[string]fileValue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s", path, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]fileValue{}
	var errs []error
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line := keyLine(data, k)
		name := strings.ReplaceAll(k, "_", "-")
		if fs.Lookup(name) == nil || notKeys[name] {
			errs = append(errs, fmt.Errorf("%s:%d: unknown key %q (the keys are serve's flags; see wasmcp serve --help)", path, line, k))
			continue
		}
		if _, dup := out[name]; dup {
			errs = append(errs, fmt.Errorf("%s:%d: key %q is set twice (as %s and %s)", path, line, name, out[name].key, k))
			continue
		}
		text, err := flagText(raw[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: key %s: %w", path, line, k, err))
			continue
		}
		out[name] = fileValue{key: k, text: text, line: line}
	}
	return out, errors.Join(errs...)
}

// flagText is a TOML value as a flag's text: strings as they are, numbers
// and booleans in decimal, arrays of strings joined with commas.
func flagText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return "", errors.New("want an array of strings")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	case map[string]any:
		return "", errors.New("tables are not settings: the file is flat, one key per flag")
	default:
		return "", fmt.Errorf("want a string, number, boolean or array of strings, not %T", v)
	}
}

// keyLine finds the line of a top-level key in TOML text (0 if not found).
func keyLine(data []byte, key string) int {
	re := regexp.MustCompile(`^\s*(` + regexp.QuoteMeta(key) + `|"` + regexp.QuoteMeta(key) + `"|'` + regexp.QuoteMeta(key) + `')\s*[=.]`)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if re.Match(sc.Bytes()) || strings.TrimSpace(sc.Text()) == "["+key+"]" {
			return n
		}
	}
	return 0
}

// secretName matches the flags whose values are secrets.
var secretName = regexp.MustCompile(`(?i)(secret|token|password|passwd|credential|api-key)`)

// masked is a setting's value fit to print: secrets replaced, a password in
// a URL hidden.
func masked(name, value string) string {
	if value == "" {
		return value
	}
	if secretName.MatchString(name) && !strings.HasSuffix(name, "-file") {
		return "********"
	}
	if u, err := url.Parse(value); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "********")
			return u.String()
		}
	}
	return value
}

// Write prints the configuration as TOML, each key with its source.
func (cfg *Config) Write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# wasmcp serve: effective configuration (command line > WASMCP_* environment > --config file > default)\n")
	cfg.fs.VisitAll(func(f *flag.Flag) {
		if notKeys[f.Name] {
			return
		}
		v := masked(f.Name, f.Value.String())
		var lit string
		switch f.Value.(type) {
		case interface{ IsBoolFlag() bool }:
			lit = v
		default:
			if _, err := strconv.ParseInt(v, 10, 64); err == nil && !isStringFlag(f) {
				lit = v
			} else {
				lit = strconv.Quote(v)
			}
		}
		fmt.Fprintf(&b, "%s = %s # %s\n", f.Name, lit, cfg.sources[f.Name])
	})
	_, err := io.WriteString(w, b.String())
	return err
}

// isStringFlag reports whether a flag holds free text (quoted even when it
// looks like a number).
func isStringFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return true
	}
	_, s := g.Get().(string)
	return s
}
