package s3store

// The shared files of the AWS CLI (~/.aws/credentials and ~/.aws/config),
// read here rather than through the SDK's config package: linking that
// package costs every retval process its init and, unless told otherwise,
// an instance-metadata probe, and every retval call is a new process. Only
// what a store needs is read — a profile's static keys, region and
// endpoint_url — and a profile that gets its credentials another way (a
// role, SSO, a process) is refused with what to do instead.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/retval/retval/internal/fsx"
)

// maxProfileFile bounds the read of each shared file; the AWS CLI's are a
// few hundred bytes.
const maxProfileFile = 1 << 20

// profileProviders are the keys by which a profile gets credentials some
// way other than static keys, which retval does not follow. Those marked
// first are tried by the AWS CLI before the static keys of the same
// profile, so using the keys would use another identity than the CLI's.
var profileProviders = []struct {
	key   string
	first bool
}{
	{"role_arn", true},
	{"web_identity_token_file", true},
	{"sso_session", true},
	{"sso_start_url", true},
	{"sso_account_id", true},
	{"sso_role_name", true},
	{"credential_process", false},
	{"credential_source", false},
	{"source_profile", false},
}

// applyProfile fills what the environment left empty in c from the
// profile AWS_PROFILE names ("default" when it is unset), as the AWS CLI
// reads it: the credentials file's static keys before the config file's,
// the environment's keys before either; region and endpoint_url from
// either file (the credentials file's win) where no variable set them.
func applyProfile(c *Config) error {
	name, named := os.Getenv("AWS_PROFILE"), true
	if name == "" {
		name, named = "default", false
	}
	credPath, confPath := sharedFile("AWS_SHARED_CREDENTIALS_FILE", "credentials"), sharedFile("AWS_CONFIG_FILE", "config")
	cred, err := readProfile(credPath, name, false)
	if err != nil {
		return err
	}
	conf, err := readProfile(confPath, name, true)
	if err != nil {
		return err
	}
	if cred == nil && conf == nil {
		if named {
			return fmt.Errorf("profile %q is not in %s or %s", name, credPath, confPath)
		}
		return nil
	}
	merged := maps.Clone(conf)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, cred) // the credentials file's win, as for the AWS CLI
	if c.Region == "" {
		c.Region = merged["region"]
	}
	if c.Endpoint == "" {
		c.Endpoint = merged["endpoint_url"]
	}
	if c.AccessKey != "" || c.SecretKey != "" {
		return nil // the environment's keys win, whole or not at all
	}
	keys, path := cred, credPath
	if keys["aws_access_key_id"] == "" && keys["aws_secret_access_key"] == "" {
		keys, path = conf, confPath
	}
	id, secret := keys["aws_access_key_id"], keys["aws_secret_access_key"]
	if (id == "") != (secret == "") {
		have, missing := "aws_access_key_id", "aws_secret_access_key"
		if id == "" {
			have, missing = missing, have
		}
		return fmt.Errorf("profile %q in %s sets %s but not %s", name, path, have, missing)
	}
	for _, p := range profileProviders {
		if merged[p.key] != "" && (id == "" || p.first) {
			return fmt.Errorf("profile %q uses %s, which retval does not read: export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN instead, e.g. eval \"$(aws configure export-credentials --profile %s --format env)\"", name, p.key, name)
		}
	}
	if id == "" {
		if named {
			return fmt.Errorf("no S3 credentials: profile %q has no aws_access_key_id and aws_secret_access_key: set them, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", name)
		}
		return nil
	}
	// The session token goes with the keys it was issued with, never an
	// environment's token with a file's keys.
	c.AccessKey, c.SecretKey, c.SessionToken = id, secret, keys["aws_session_token"]
	return nil
}

// sharedFile is the path variable names, or ~/.aws/base; "" when neither
// is known.
func sharedFile(variable, base string) string {
	if p := os.Getenv(variable); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".aws", base)
}

// readProfile returns the keys of profile name in the shared file at
// path, nil when the file has no such profile. config selects the config
// file's headers ([profile NAME], and [default]) over the credentials
// file's ([NAME]). A file that does not exist, or is not a regular file
// (a FIFO, a device such as /dev/null), counts as empty — as for the AWS
// CLI — and is never read or waited on.
func readProfile(path, name string, config bool) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := fsx.ReadUserFile(path, maxProfileFile)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsx.ErrNotRegular) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading AWS profile %q: %w", name, err)
	}
	return parseProfile(b, name, config), nil
}

// parseProfile reads profile name's keys out of an INI file as the AWS CLI
// writes and reads it: a line starting with # or ; is a comment, and so
// is the rest of a line from a # or ; after a space; a key is separated
// from its value by = (or :) with any whitespace around it; keys are
// case-insensitive; a later key or section of the same name adds to or
// overrides an earlier one. An indented line after a key continues it (a
// nested setting such as "s3 =" followed by "  endpoint_url = …"), and is
// not read: only a profile's top-level keys are.
func parseProfile(b []byte, name string, config bool) map[string]string {
	var keys map[string]string
	in, cont := false, false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if trimmed[0] == '[' {
			header, _, ok := strings.Cut(trimmed[1:], "]")
			in, cont = ok && sectionName(strings.TrimSpace(header), config) == name, false
			if in && keys == nil {
				keys = map[string]string{}
			}
			continue
		}
		if !in {
			continue
		}
		if cont && (line[0] == ' ' || line[0] == '\t') {
			continue // a nested setting of the key before
		}
		i := strings.IndexAny(trimmed, "=:")
		if i < 0 {
			continue
		}
		k := strings.ToLower(strings.TrimSpace(trimmed[:i]))
		v := trimmed[i+1:]
		if j := inlineComment(v); j >= 0 {
			v = v[:j]
		}
		keys[k] = strings.TrimSpace(v)
		cont = true
	}
	return keys
}

// sectionName is the profile a section header names, "" for a section
// that is not a profile (in the config file, [sso-session x], [services
// x] and any other header without the profile prefix but [default]).
func sectionName(header string, config bool) string {
	if !config {
		return header
	}
	if header == "default" {
		return header
	}
	if rest, ok := strings.CutPrefix(header, "profile"); ok && rest != strings.TrimLeft(rest, " \t") {
		return strings.TrimSpace(rest)
	}
	return ""
}

// inlineComment is the index of a # or ; after whitespace in v, -1 when
// there is none.
func inlineComment(v string) int {
	for i := 1; i < len(v); i++ {
		if (v[i] == '#' || v[i] == ';') && (v[i-1] == ' ' || v[i-1] == '\t') {
			return i
		}
	}
	return -1
}
