package s3store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retval/retval/internal/testenv"
)

// clearAWSEnv unsets every AWS_ variable for the test and gives it an
// empty HOME, so neither the caller's environment nor their ~/.aws is
// read. It returns that HOME.
func clearAWSEnv(t *testing.T) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	return home
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const (
	defaultKeys = "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = SKFILE\n"
	// roleErr is the refusal of profile "admin" for role_arn.
	roleErr = `profile "admin" uses role_arn, which retval does not read: export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN instead, e.g. eval "$(aws configure export-credentials --profile admin --format env)"`
)

// ConfigFromEnv reads what the AWS variables leave unset from the shared
// credentials and config files, as the AWS CLI does. Every case here needs
// the files read to pass. In env, cred and conf, {home} is the test's HOME;
// cred and conf, when not empty, are written to ~/.aws/credentials and
// ~/.aws/config; setup, when set, makes other files.
func TestConfigFromProfile(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        map[string]string
		cred, conf string
		setup      func(t *testing.T, home string)
		want       Config
		err        string
	}{{
		name: "default profile in the credentials file",
		cred: defaultKeys + "aws_session_token = TKFILE\n",
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE", SessionToken: "TKFILE"},
	}, {
		name: "default profile in the config file, region and endpoint too",
		conf: defaultKeys + "region = eu-north-1\nendpoint_url = http://127.0.0.1:7070\n",
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE", Region: "eu-north-1", Endpoint: "http://127.0.0.1:7070", PathStyle: true},
	}, {
		name: "environment keys win over the profile's, whose region is still read",
		env:  map[string]string{"AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "SKENV", "AWS_SESSION_TOKEN": "TKENV"},
		cred: defaultKeys + "aws_session_token = TKFILE\n",
		conf: "[default]\nregion = eu-central-1\n",
		want: Config{AccessKey: "AKENV", SecretKey: "SKENV", SessionToken: "TKENV", Region: "eu-central-1"},
	}, {
		name: "environment region and endpoint win over the profile's",
		env:  map[string]string{"AWS_REGION": "us-west-2", "AWS_ENDPOINT_URL_S3": "http://s3.local:9000"},
		cred: defaultKeys,
		conf: "[default]\nregion = eu-central-1\nendpoint_url = http://profile.local:1\n",
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE", Region: "us-west-2", Endpoint: "http://s3.local:9000", PathStyle: true},
	}, {
		name: "AWS_DEFAULT_REGION and AWS_ENDPOINT_URL win over the profile's",
		env:  map[string]string{"AWS_DEFAULT_REGION": "ap-south-1", "AWS_ENDPOINT_URL": "https://all.local"},
		cred: defaultKeys,
		conf: "[default]\nregion = eu-central-1\nendpoint_url = http://profile.local:1\n",
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE", Region: "ap-south-1", Endpoint: "https://all.local", PathStyle: true},
	}, {
		name: "an environment session token is not paired with a file's keys",
		env:  map[string]string{"AWS_SESSION_TOKEN": "TKENV"},
		cred: defaultKeys,
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE"},
	}, {
		name: "[profile NAME] in the config file, [NAME] in the credentials file",
		env:  map[string]string{"AWS_PROFILE": "minio"},
		cred: defaultKeys + "[minio]\naws_access_key_id = AKMINIO\naws_secret_access_key = SKMINIO\n",
		conf: "[default]\nregion = eu-central-1\n[profile minio]\nregion = local\nendpoint_url = http://minio.local:9000\n",
		want: Config{AccessKey: "AKMINIO", SecretKey: "SKMINIO", Region: "local", Endpoint: "http://minio.local:9000", PathStyle: true},
	}, {
		name: "the credentials file's keys and token win over the config file's",
		env:  map[string]string{"AWS_PROFILE": "work"},
		cred: "[work]\naws_access_key_id = AKCRED\naws_secret_access_key = SKCRED\naws_session_token = TKCRED\n",
		conf: "[profile work]\naws_access_key_id = AKCONF\naws_secret_access_key = SKCONF\naws_session_token = TKCONF\nregion = eu-west-1\n",
		want: Config{AccessKey: "AKCRED", SecretKey: "SKCRED", SessionToken: "TKCRED", Region: "eu-west-1"},
	}, {
		name: "the config file's keys and token when the credentials file has none",
		env:  map[string]string{"AWS_PROFILE": "work"},
		cred: "[work]\nregion = eu-west-2\n",
		conf: "[profile work]\naws_access_key_id = AKCONF\naws_secret_access_key = SKCONF\naws_session_token = TKCONF\nregion = eu-west-1\n",
		want: Config{AccessKey: "AKCONF", SecretKey: "SKCONF", SessionToken: "TKCONF", Region: "eu-west-2"},
	}, {
		name: "comments, whitespace, case, colons, CRLF and later duplicates",
		cred: "# written by hand\n; and edited\n  [ default ]  \r\n" +
			"aws_access_key_id=OLD\r\n" +
			"AWS_Access_Key_ID   =   AKNEW    # the rotated one\n" +
			"aws_secret_access_key\t=\tSK#NOTACOMMENT ; trailing\n" +
			"[other]\naws_session_token = WRONG\n" +
			"[default]\naws_session_token: TK\n",
		want: Config{AccessKey: "AKNEW", SecretKey: "SK#NOTACOMMENT", SessionToken: "TK"},
	}, {
		name: "nested settings are not the profile's own",
		cred: defaultKeys,
		conf: "[default]\nregion = eu-west-1\ns3 =\n  endpoint_url = http://nested.local:1\n  addressing_style = path\n\n[services local]\ns3 =\n  endpoint_url = http://services.local:1\n",
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE", Region: "eu-west-1"},
	}, {
		name: "[profile default] in the config file is the default profile",
		conf: "[profile default]\naws_access_key_id = AKPD\naws_secret_access_key = SKPD\n",
		want: Config{AccessKey: "AKPD", SecretKey: "SKPD"},
	}, {
		name: "files named by AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE",
		env:  map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "{home}/c.ini", "AWS_CONFIG_FILE": os.DevNull},
		cred: "[default]\naws_access_key_id = IGNORED\naws_secret_access_key = IGNORED\n",
		setup: func(t *testing.T, home string) {
			writeFile(t, filepath.Join(home, "c.ini"), defaultKeys)
		},
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE"},
	}, {
		name: "a symlinked credentials file is followed",
		setup: func(t *testing.T, home string) {
			writeFile(t, filepath.Join(home, "dotfiles", "credentials"), defaultKeys)
			os.MkdirAll(filepath.Join(home, ".aws"), 0o755)
			if err := os.Symlink(filepath.Join(home, "dotfiles", "credentials"), filepath.Join(home, ".aws", "credentials")); err != nil {
				t.Fatal(err)
			}
		},
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE"},
	}, {
		name: "a FIFO in place of the credentials file is skipped, not waited on",
		conf: defaultKeys,
		setup: func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, ".aws"), 0o755)
			testenv.Mkfifo(t, filepath.Join(home, ".aws", "credentials"))
		},
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE"},
	}, {
		name: "credential_process beside static keys: the keys, as the AWS CLI",
		cred: defaultKeys,
		conf: "[default]\ncredential_process = /bin/false\n",
		want: Config{AccessKey: "AKFILE", SecretKey: "SKFILE"},
	}, {
		name: "role_arn without static keys is refused",
		env:  map[string]string{"AWS_PROFILE": "admin"},
		cred: defaultKeys,
		conf: "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = default\n",
		err:  roleErr,
	}, {
		name: "role_arn beside static keys is refused: the AWS CLI would assume the role",
		env:  map[string]string{"AWS_PROFILE": "admin"},
		cred: "[admin]\naws_access_key_id = AK\naws_secret_access_key = SK\n",
		conf: "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = admin\n",
		err:  roleErr,
	}, {
		name: "sso without static keys is refused",
		conf: "[default]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = dev\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n",
		err:  `profile "default" uses sso_session, which retval does not read: export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN instead, e.g. eval "$(aws configure export-credentials --profile default --format env)"`,
	}, {
		name: "a refused profile is not read when the environment has keys",
		env:  map[string]string{"AWS_PROFILE": "admin", "AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "SKENV"},
		conf: "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = default\nregion = us-east-2\n",
		want: Config{AccessKey: "AKENV", SecretKey: "SKENV", Region: "us-east-2"},
	}, {
		name: "a named profile that is in neither file",
		env:  map[string]string{"AWS_PROFILE": "work"},
		cred: defaultKeys,
		conf: "[work]\naws_access_key_id = AK\naws_secret_access_key = SK\n", // not [profile work]
		err:  `profile "work" is not in {home}/.aws/credentials or {home}/.aws/config`,
	}, {
		name: "a named profile, and no files where the variables point",
		env:  map[string]string{"AWS_PROFILE": "work", "AWS_SHARED_CREDENTIALS_FILE": "{home}/none/c", "AWS_CONFIG_FILE": "{home}/none/k"},
		cred: defaultKeys,
		err:  `profile "work" is not in {home}/none/c or {home}/none/k`,
	}, {
		name: "a named profile without keys",
		env:  map[string]string{"AWS_PROFILE": "work"},
		conf: "[profile work]\nregion = eu-west-1\n",
		err:  `no S3 credentials: profile "work" has no aws_access_key_id and aws_secret_access_key: set them, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
	}, {
		name: "half a key pair",
		cred: "[default]\naws_secret_access_key = SK\n",
		err:  `profile "default" in {home}/.aws/credentials sets aws_secret_access_key but not aws_access_key_id`,
	}, {
		name: "a credentials file over the bound",
		cred: defaultKeys + "# " + strings.Repeat("x", maxProfileFile) + "\n",
		err:  `reading AWS profile "default": {home}/.aws/credentials is too large (over 1048576 bytes)`,
	}, {
		name: "a profile's endpoint that is not an http(s) URL",
		conf: defaultKeys + "endpoint_url = ftp://x\n",
		err:  `S3 endpoint "ftp://x" is not an http(s) URL`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			home := clearAWSEnv(t)
			expand := func(s string) string { return strings.ReplaceAll(s, "{home}", home) }
			for k, v := range tc.env {
				t.Setenv(k, expand(v))
			}
			if tc.cred != "" {
				writeFile(t, filepath.Join(home, ".aws", "credentials"), expand(tc.cred))
			}
			if tc.conf != "" {
				writeFile(t, filepath.Join(home, ".aws", "config"), expand(tc.conf))
			}
			if tc.setup != nil {
				tc.setup(t, home)
			}
			type result struct {
				c   Config
				err error
			}
			done := make(chan result, 1)
			go func() {
				c, err := ConfigFromEnv()
				done <- result{c, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second): // only a hang fails here
				t.Fatal("ConfigFromEnv blocked")
			}
			if tc.err != "" {
				if r.err == nil || r.err.Error() != expand(tc.err) {
					t.Fatalf("ConfigFromEnv = %+v, %v\nwant error %s", r.c, r.err, expand(tc.err))
				}
				return
			}
			if r.err != nil || r.c != tc.want {
				t.Fatalf("ConfigFromEnv = %+v, %v\nwant %+v", r.c, r.err, tc.want)
			}
		})
	}
}
