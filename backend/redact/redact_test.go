package redact

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every secret in these tests is generated at run time by fk from a fixed
// seed: obviously fake, and never a literal a secret scanner could flag in
// the repository.

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowerN = "abcdefghijklmnopqrstuvwxyz0123456789"
	upperN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexLow = "0123456789abcdef"
	b64    = alnum + "+/"
	urlB64 = alnum + "-_"
)

var fkSeed uint64 = 0x5eed

// fk returns prefix followed by n pseudo-random characters of alphabet.
func fk(prefix string, n int, alphabet string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		fkSeed = fkSeed*6364136223846793005 + 1442695040888963407
		b.WriteByte(alphabet[(fkSeed>>33)%uint64(len(alphabet))])
	}
	return b.String()
}

type posCase struct {
	name    string
	text    string
	secrets []string // each must be fully masked
	kind    string   // kind of the first secret's finding ("" = any)
}

func positives() []posCase {
	awsID := fk("AKIA", 16, upperN)
	awsSecret := fk("", 40, b64)
	awsID2 := fk("ASIA", 16, upperN)
	awsSess := fk("IQoJb3JpZ2luX2Vj", 300, b64)
	ghp := fk("ghp_", 36, alnum)
	gho := fk("gho_", 36, alnum)
	ghpat := fk("github_pat_11", 20, upperN) + "_" + fk("", 59, alnum)
	glpat := fk("glpat-", 20, urlB64)
	xoxb := "xoxb-" + fk("", 12, "0123456789") + "-" + fk("", 13, "0123456789") + "-" + fk("", 24, alnum)
	xoxp := "xoxp-" + fk("", 12, "0123456789") + "-" + fk("", 12, "0123456789") + "-" + fk("", 13, "0123456789") + "-" + fk("", 32, hexLow)
	hook := "hooks.slack.com/services/" + fk("T", 10, upperN) + "/" + fk("B", 10, upperN) + "/" + fk("", 24, alnum)
	skLive := fk("sk_live_51", 90, alnum)
	rkLive := fk("rk_live_51", 90, alnum)
	whsec := fk("whsec_", 32, alnum)
	openai := fk("sk-proj-", 40, urlB64) + "T3BlbkFJ" + fk("", 40, urlB64)
	openaiOld := fk("sk-", 48, alnum)
	ant := fk("sk-ant-api03-", 93, urlB64) + "AA"
	aiza := fk("AIzaSy", 33, urlB64)
	ya29 := fk("ya29.a0", 120, urlB64)
	gocspx := fk("GOCSPX-", 28, urlB64)
	sg := fk("SG.", 22, urlB64) + "." + fk("", 43, urlB64)
	twSK := fk("SK", 32, hexLow)
	twTok := fk("", 32, hexLow)
	npm := fk("npm_", 36, alnum)
	acctKey := fk("", 86, b64) + "=="
	sasKey := fk("", 43, b64) + "="
	jwt := fk("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ", 60, urlB64) + "." + fk("", 43, urlB64)
	rsaBody := ""
	for i := 0; i < 6; i++ {
		rsaBody += fk("", 64, b64) + "\n"
	}
	rsa := "-----BEGIN RSA PRIVATE KEY-----\n" + rsaBody + "-----END RSA PRIVATE KEY-----"
	ossh := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + rsaBody + "-----END OPENSSH PRIVATE KEY-----"
	ecIndented := "-----BEGIN EC PRIVATE KEY-----\n    " + fk("", 64, b64) + "\n    " + fk("", 40, b64) + "==\n    -----END EC PRIVATE KEY-----"
	jsonPEM := `-----BEGIN PRIVATE KEY-----\n` + fk("", 64, b64) + `\n` + fk("", 64, b64) + `\n-----END PRIVATE KEY-----\n`
	pw := fk("", 18, alnum+"~.-")
	pw2 := fk("", 16, alnum)
	pw3 := fk("", 14, alnum+"!#%")
	age := fk("AGE-SECRET-KEY-1", 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
	opaque := fk("", 48, alnum)
	hexKey := fk("", 32, hexLow)
	uuidTok := fk("", 8, hexLow) + "-" + fk("", 4, hexLow) + "-4" + fk("", 3, hexLow) + "-a" + fk("", 3, hexLow) + "-" + fk("", 12, hexLow)
	sess := fk("", 32, lowerN)
	b64secret := fk("", 24, b64) + "=="
	basic := "dXNlcjpzM2NyM3RwYXNzd29yZA==" // base64 of user:s3cr3tpassword
	djangoKey := fk("", 50, lowerN+"!@#%^&*(-_=+)")

	return []posCase{
		{"aws credentials file", "[default]\naws_access_key_id = " + awsID + "\naws_secret_access_key = " + awsSecret + "\nregion = eu-west-1\n", []string{awsID, awsSecret}, "aws-access-key"},
		{"aws env exports", "export AWS_ACCESS_KEY_ID=" + awsID2 + "\nexport AWS_SECRET_ACCESS_KEY=" + awsSecret + "\nexport AWS_SESSION_TOKEN=" + awsSess + "\n", []string{awsID2, awsSecret, awsSess}, "aws-access-key"},
		{"aws boto3 kwargs", "s3 = boto3.client(\"s3\", aws_access_key_id=\"" + awsID + "\", aws_secret_access_key=\"" + awsSecret + "\")", []string{awsID, awsSecret}, ""},
		{"aws csv pair", "Access key ID,Secret access key\n" + awsID + "," + awsSecret + "\n", []string{awsID, awsSecret}, ""},
		{"github pat in remote", "origin\thttps://" + ghp + "@github.com/acme/infra.git (fetch)", []string{ghp}, "github-token"},
		{"github oauth in log", "DEBUG gh-auth: device flow complete token=" + gho + " scopes=repo", []string{gho}, "github-token"},
		{"github fine-grained", "echo \"" + ghpat + "\" | docker login ghcr.io -u bot --password-stdin", []string{ghpat}, "github-token"},
		{"github authorization token", "curl -H \"Authorization: token " + ghp + "\" https://api.github.com/user", []string{ghp}, "github-token"},
		{"gitlab header", "curl --header \"PRIVATE-TOKEN: " + glpat + "\" https://gitlab.example.com/api/v4/projects", []string{glpat}, "gitlab-token"},
		{"slack bot token", "client = WebClient(token=\"" + xoxb + "\")", []string{xoxb}, "slack-token"},
		{"slack bearer", "curl -H \"Authorization: Bearer " + xoxp + "\" https://slack.com/api/conversations.list", []string{xoxp}, "slack-token"},
		{"slack webhook", "slack_configs:\n  - api_url: https://" + hook + "\n    channel: '#oncall'", []string{hook}, "slack-webhook"},
		{"stripe in prose", "my stripe key is " + skLive + ", can you see why charges fail?", []string{skLive}, "stripe-key"},
		{"stripe restricted", "Stripe.api_key = ENV.fetch(\"STRIPE_KEY\", \"" + rkLive + "\")", []string{rkLive}, "stripe-key"},
		{"stripe webhook secret", "STRIPE_WEBHOOK_SECRET=" + whsec, []string{whsec}, "stripe-key"},
		{"openai project key", "client = OpenAI(api_key=\"" + openai + "\")", []string{openai}, "openai-key"},
		{"openai legacy key", "export OPENAI_API_KEY=" + openaiOld, []string{openaiOld}, "openai-key"},
		{"anthropic key header", "curl https://api.anthropic.com/v1/messages -H \"x-api-key: " + ant + "\" -H \"anthropic-version: 2023-06-01\"", []string{ant}, "anthropic-key"},
		{"google api key in url", "curl \"https://maps.googleapis.com/maps/api/geocode/json?address=Main+St&key=" + aiza + "\"", []string{aiza}, "google-api-key"},
		{"google oauth token", "Authorization: Bearer " + ya29, []string{ya29}, "google-oauth"},
		{"google client secret", "{\"installed\": {\"client_id\": \"1234-abc.apps.googleusercontent.com\", \"client_secret\": \"" + gocspx + "\"}}", []string{gocspx}, "google-oauth"},
		{"sendgrid", "EMAIL_HOST_PASSWORD = \"" + sg + "\"", []string{sg}, "sendgrid-key"},
		{"twilio", "TWILIO_API_KEY=" + twSK + "\nTWILIO_AUTH_TOKEN=" + twTok + "\n", []string{twSK, twTok}, "twilio-key"},
		{"npmrc", "//registry.npmjs.org/:_authToken=" + npm + "\n", []string{npm}, "npm-token"},
		{"npm config set", "npm config set //registry.npmjs.org/:_authToken " + npm, []string{npm}, "npm-token"},
		{"azure storage", "\"Blob\": \"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + acctKey + ";EndpointSuffix=core.windows.net\"", []string{acctKey}, "azure-key"},
		{"azure service bus", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=" + sasKey, []string{sasKey}, "azure-key"},
		{"jwt in prose", "here's the token from localStorage: " + jwt + "\nit says expired", []string{jwt}, "jwt"},
		{"rsa private key", "$ cat id_rsa\n" + rsa + "\n$ ls", []string{rsa}, "private-key"},
		{"openssh key in fence", "```\n" + ossh + "\n```", []string{ossh}, "private-key"},
		{"ec key in k8s secret", "kind: Secret\ntype: Opaque\nstringData:\n  signing.pem: |\n    " + ecIndented + "\n", []string{ecIndented}, "private-key"},
		{"private key in json", "{\"type\": \"service_account\", \"private_key\": \"" + jsonPEM + "\"}", []string{strings.TrimSuffix(jsonPEM, `\n`)}, "private-key"},
		{"truncated private key", "-----BEGIN PRIVATE KEY-----\n" + rsaBody + "(rest cut)", []string{strings.TrimSuffix(rsaBody, "\n")}, "private-key"},
		{"postgres uri", "could not connect to postgresql://billing:" + pw + "@pg-2.internal:5432/billing: timeout", []string{pw}, "db-uri"},
		{"mysql sqlalchemy", "create_engine(\"mysql+pymysql://etl:" + pw2 + "@10.20.4.15:3306/wh?charset=utf8mb4\")", []string{pw2}, "db-uri"},
		{"mongodb srv", "const uri = \"mongodb+srv://svc:" + pw2 + "@cluster0.ab12c.mongodb.net/catalog?retryWrites=true\";", []string{pw2}, "db-uri"},
		{"redis empty user", "CELERY_BROKER_URL=redis://:" + pw + "@10.0.0.12:6379/1", []string{pw}, "db-uri"},
		{"amqp", "BROKER=amqps://app:" + pw2 + "@rabbit.internal:5671/vhost", []string{pw2}, "db-uri"},
		{"basic auth url", "index-url = https://deploy:" + pw + "@pypi.acme.internal/simple/", []string{pw}, "basic-auth"},
		{"bearer opaque", "curl -X POST https://api.acme.io/v1/refunds -H \"Authorization: Bearer " + opaque + "\"", []string{opaque}, "bearer"},
		{"basic header", "Authorization: Basic " + basic, []string{basic}, "basic-auth"},
		{"authorization token scheme", "headers = {\"Authorization\": \"Token " + hexKey + "\"}", []string{hexKey}, ""},
		{"cookie header", "GET /admin HTTP/2\nHost: admin.acme.io\nCookie: _ga=GA1.2.159.171; sessionid=" + sess + "\nAccept: text/html", []string{sess}, "cookie"},
		{"set-cookie", "HTTP/1.1 302 Found\nSet-Cookie: connect.sid=s%3A" + sess + "; Path=/; HttpOnly", []string{sess}, "cookie"},
		{"jsessionid in url", "GET /shop/cart;JSESSIONID=" + strings.ToUpper(sess) + " HTTP/1.1", []string{strings.ToUpper(sess)}, "session"},
		{"phpsessid", "curl -b 'PHPSESSID=" + sess + "' https://old.acme.io/admin.php", []string{sess}, ""},
		{"k8s secret data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  username: YWRtaW4=\n  password: " + b64secret + "\n---\nkind: ConfigMap\ndata:\n  mode: fast\n", []string{b64secret}, "k8s-secret"},
		{"kubectl from-literal", "kubectl create secret generic db --from-literal=password=" + pw2 + " --dry-run=client", []string{pw2}, "secret"},
		{"age key", "# created: 2024-01-01\n# public key: age1qqq\n" + age, []string{age}, "age-key"},
		{"dotenv", "APP_NAME=inventory\nDB_PASSWORD=" + pw + "\nSECRET_KEY=" + hexKey + hexKey + "\nAPI_TOKEN=" + opaque + "\nDEBUG=false\n", []string{pw, hexKey + hexKey, opaque}, "password"},
		{"export token", "export GITLAB_TOKEN=" + opaque, []string{opaque}, "token"},
		{"yaml password", "database:\n  host: db.internal\n  password: " + pw3 + "\n  pool: 5\n", []string{pw3}, "password"},
		{"json password", "{\"user\": \"svc\", \"password\": \"" + pw3 + "\", \"port\": 5432}", []string{pw3}, "password"},
		{"toml password", "[database]\nuser = \"app\"\npassword = \"" + pw + "\"\n", []string{pw}, "password"},
		{"properties", "spring.datasource.username=hr_app\nspring.datasource.password=" + pw2 + "\n", []string{pw2}, "password"},
		{"terraform tfvars", "db_username   = \"app\"\ndb_password   = \"" + pw2 + "\"\n", []string{pw2}, "password"},
		{"django secret", "SECRET_KEY = '" + djangoKey + "'", []string{djangoKey}, "secret"},
		{"xml element", "<configuration>\n  <password>" + pw2 + "</password>\n</configuration>", []string{pw2}, "password"},
		{"nuget add key", "<add key=\"ClearTextPassword\" value=\"" + pw2 + "\" />", []string{pw2}, "password"},
		{"k8s env value", "env:\n  - name: DB_PASSWORD\n    value: \"" + pw2 + "\"\n", []string{pw2}, "password"},
		{"x-api-key header", "requests.get(url, headers={\"X-API-Key\": \"" + hexKey + "\"}, timeout=5)", []string{hexKey}, "api-key"},
		{"uuid token", "env:\n  SNYK_TOKEN: " + uuidTok + "\n", []string{uuidTok}, "token"},
		{"python typed", "API_TOKEN: str = \"" + opaque + "\"", []string{opaque}, "token"},
		{"go declaration", "var apiToken string = \"" + opaque + "\"", []string{opaque}, "token"},
		{"php array", "$config['db_password'] = '" + pw2 + "';", []string{pw2}, "password"},
		{"docker login -p", "docker login -u ci-pusher -p " + pw + " registry.acme.io", []string{pw}, "password"},
		{"sshpass", "sshpass -p '" + pw3 + "' ssh ops@10.8.0.21 'sudo systemctl restart nginx'", []string{pw3}, "password"},
		{"mysql -p attached", "mysql -u root -p" + pw2 + " -h db.internal app", []string{pw2}, "password"},
		{"curl -u", "curl -u admin:" + pw + " -X POST https://jenkins.acme.io/job/deploy", []string{pw}, "basic-auth"},
		{"long flag", "vault login --token=" + opaque + " --address https://vault.internal", []string{opaque}, "token"},
		{"long flag space", "mycli deploy --api-key " + hexKey + " --region eu", []string{hexKey}, "api-key"},
		{"prose password", "btw the staging password is " + pw3 + " if you need it", []string{pw3}, "password"},
		{"commit message", "temp: hardcode partner key (PARTNER_API_KEY=" + opaque + ") -- remove", []string{opaque}, "api-key"},
		{"netrc", "machine api.heroku.com\n  login me@acme.io\n  password " + opaque + "\n", []string{opaque}, "password"},
		{"pgpass", "db.internal.acme.io:5432:billing:app:" + pw3 + "\n*:*:*:postgres:" + pw2 + "\n", []string{pw3, pw2}, "password"},
		{"pgpass after its name, other ports", "$ cat ~/.pgpass\nprod.db:5440:app:svc:" + pw2 + "\nstaging.db:5441:app:svc:" + pw3 + "\n", []string{pw2, pw3}, "password"},
		{"pgpass quoted, escaped colon", "my ~/.pgpass is `10.0.3.7:6432:*:reporting:" + pw2 + `\:x` + "` and psql still asks", []string{pw2 + `\:x`}, "password"},
		{"json escaped value", "{\"config.ini\": \"ETSY_TOKEN=" + pw2 + "\\nBACKUP_ENABLED=true\"}", []string{pw2}, "token"},
		{"numbered key", "\"access_token2\": \"" + opaque + "\"", []string{opaque}, "token"},
		{"weak key random value", "signing_key: " + fk("", 44, b64), nil, "secret"},
		{"docker config auth", "{\"auths\": {\"registry.acme.io\": {\"auth\": \"" + basic + "\"}}}", []string{basic}, "secret"},
		{"telegram bot url", "curl https://api.telegram.org/bot" + fk("", 9, "0123456789") + ":" + fk("AA", 33, urlB64) + "/sendMessage", nil, "api-token"},
		{"kubeconfig client key", "users:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + fk("", 120, b64) + "\n", nil, "private-key"},
		{"putty key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n" + fk("", 64, b64) + "\nPrivate-MAC: " + fk("", 64, hexLow) + "\n", nil, "private-key"},
		{"dockerfile env", "FROM node:20\nENV NPM_TOKEN " + opaque + "\nRUN npm ci", []string{opaque}, "token"},
		{"aws configure set", "aws configure set aws_secret_access_key " + awsSecret, []string{awsSecret}, "aws-secret-key"},
		{"redis requirepass", "# redis.conf\nrequirepass " + pw2 + "\nmaxmemory 2gb", []string{pw2}, "password"},
		{"powershell securestring", "$pw = ConvertTo-SecureString '" + pw3 + "' -AsPlainText -Force", []string{pw3}, "password"},
		{"openssl passout", "openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:" + pw2 + " -out bundle.p12", []string{pw2}, "password"},
		{"keytool storepass", "keytool -importkeystore -srckeystore a.jks -srcstorepass " + pw2 + " -destkeystore b.p12", []string{pw2}, "password"},
		{"sqlcmd -P", "sqlcmd -S db.internal -U sa -P " + pw3 + " -Q \"SELECT 1\"", []string{pw3}, "password"},
		{"prose without verb", "ssh in as root with password " + pw3 + " and restart it", []string{pw3}, "password"},
		{"prose is now", "I rotated it: the password is now " + pw3 + ", tell the team", []string{pw3}, "password"},
		{"prose changed to", "the api key was changed to " + hexKey + " yesterday", []string{hexKey}, "api-key"},
		{"prose what for", "The root password for the staging db is now " + pw3, []string{pw3}, "password"},
		{"prose what for, set to", "the token for the deploy bot has been set to " + opaque + ".", []string{opaque}, "token"},
		{"powershell env", "$env:GITHUB_TOKEN = \"" + opaque + "\"", []string{opaque}, "token"},
		{"jdbc params", "jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=" + pw2 + ";encrypt=true", []string{pw2}, "password"},
		{"helm set", "helm install app ./chart --set auth.password=" + pw2 + " --set auth.username=app", []string{pw2}, "password"},
		{"docker run env", "docker run -e POSTGRES_PASSWORD=" + pw2 + " -p 5432:5432 postgres:16", []string{pw2}, "password"},
		{"query param token", "GET /api/export?format=csv&access_token=" + opaque + "&page=2 HTTP/1.1", []string{opaque}, "token"},
		{"git credentials", "https://bob:" + ghp + "@github.com", []string{ghp}, "github-token"},
		{"sql identified by", "ALTER USER 'app'@'%' IDENTIFIED BY '" + pw3 + "';", []string{pw3}, "password"},
		{"sql with password", "CREATE USER chuck WITH PASSWORD '" + pw2 + "' SUPERUSER;", []string{pw2}, "password"},
		{"powershell -Password", "New-LocalUser -Name svc -Password '" + pw3 + "'", []string{pw3}, "password"},
		{"plink -pw", "plink -ssh ops@10.0.0.5 -pw " + pw3 + " uptime", []string{pw3}, "password"},
		{"gpg passphrase", "gpg --batch --passphrase " + pw2 + " --decrypt backup.tar.gpg", []string{pw2}, "password"},
		{"korean password", "서버 비밀번호: " + pw3, []string{pw3}, "password"},
		{"german password", "Das Passwort ist " + pw3 + " (bitte ändern)", []string{pw3}, "password"},
		{"ansi colored token", "\x1b[93m" + openaiOld + "\x1b[0m", []string{openaiOld}, "openai-key"},
		{"comparison literal", "if password == \"" + pw2 + "\":\n    grant()", []string{pw2}, "password"},
		{"curl setopt", "curl_easy_setopt(curl, CURLOPT_PASSWORD, \"" + pw2 + "\");", []string{pw2}, "password"},
		{"abbreviated key", "X3_USER=root\nX3_PSWD=" + pw2 + "\nmy_pw: " + pw3, []string{pw2, pw3}, "password"},
		{"hex secret in chat", "here's my token: " + hexKey + hexKey[:8], []string{hexKey + hexKey[:8]}, "token"},
	}
}

var negatives = []struct{ name, text string }{
	{"pgpass shapes that are not", "the job ran 10:30:45:5432:done\nlocalhost:5432:mydb:myuser:<password>\nhost:5432:db:user:*\nconnect to db.internal:5432 then run it\n"},
	{"env placeholders", "OPENAI_API_KEY=YOUR_API_KEY\nSTRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx\nDATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DBNAME\nSLACK_BOT_TOKEN=xoxb-your-bot-token\n"},
	{"docs token shapes", "tokens look like `ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX` and AWS keys start with `AKIA`, e.g. `AKIAXXXXXXXXXXXXXXXX`."},
	{"aws documented example", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"env lookups", "ANTHROPIC_API_KEY = os.environ[\"ANTHROPIC_API_KEY\"]\nSTRIPE_KEY = os.getenv(\"STRIPE_SECRET_KEY\", \"\")\ntoken := os.Getenv(\"GITHUB_TOKEN\")\nconst key = process.env.API_KEY;"},
	{"templating", "NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\npassword: \"{{ vault_db_password }}\"\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nexport TOKEN=$(cat ~/.token)\napi_key: <your-api-key>\n"},
	{"terraform refs", "resource \"random_password\" \"db\" {\n  length = 32\n}\nresource \"aws_db_instance\" \"main\" {\n  password = random_password.db.result\n  administrator_login_password = var.db_password\n}"},
	{"django form", "class SignupForm(forms.Form):\n    password_field = forms.CharField(widget=forms.PasswordInput, min_length=12)\n    password_confirm = forms.CharField(widget=forms.PasswordInput)\n"},
	{"js code", "const token = await getToken();\nconst { password } = req.body;\nreturn { token: accessToken, password: hashedPassword };\nheaders: { Authorization: `Bearer ${token}` },\nif (password.length < 8) throw new Error('Password too short');"},
	{"python code", "def current_token(request):\n    header = request.headers.get(\"Authorization\", \"\")\n    if not header.startswith(\"Bearer \"):\n        return None\n    self.api_key = api_key\n    password = getpass.getpass()\n"},
	{"identifiers", "token_count = 128\nmax_tokens = 4096\npassword_hash = bcrypt.hash(pw)\npassword_min_length = 12\ntoken_expiry: 3600\napi_key_header = \"X-API-Key\"\nsecret_name = \"prod/db\"\nkms_key_id = \"73de570b-d3ba-4c6e-89bb-5a3b4f734174\"\n"},
	{"sql", "SELECT id, email, password_hash FROM users WHERE reset_token IS NULL;\nUPDATE api_tokens SET revoked = true WHERE user_id = $1;"},
	{"git log", "cc07360 fix(auth): clock skew tolerance for token validation\n87923f9 feat: add API key rotation endpoint\nbf6de7e docs: explain SECRET_KEY handling\n064c986 test: password reset flow"},
	{"uuids in logs", "INFO request_id=3da81ddb-4626-4ad1-a91b-c62df3dd2025 user_id=ef9c44d5-ab8e-4585-951b-297374cbe20e method=POST path=/api/v1/sessions status=201"},
	{"lockfiles", "\"jsonwebtoken\": {\n  \"version\": \"9.0.2\",\n  \"integrity\": \"sha512-gWQvLlpaAiTsIjpVwuqLMcLvRcqFF5pULu2uaS8NWcRQ4Ox8eM7dIzaAbTPWpYAOQFaFrxEtWP4EFVIbxNVPqg==\"\n},\n\"dependencies\": {\"jsonwebtoken\": \"^9.0.2\", \"passport-jwt\": \"^4.0.1\", \"next-auth\": \"^4.24.5\"}"},
	{"go.sum", "github.com/golang-jwt/jwt/v5 v5.2.1 h1:JjlhFMIjdgnWp7BdgACAEEvT9fHxiltIRhremxv5kTI=\ngolang.org/x/crypto v0.22.0/go.mod h1:c3Uo7XaZUSKV3CKc94qVqU4IvDvbg0jrfI1Yhq3ShFs="},
	{"cargo lock", "[[package]]\nname = \"ring\"\nversion = \"0.17.8\"\nchecksum = \"6178ccd74b56d83f5751d4f65b9c802a4d71ad57112d5fc8c2220154e7623ccc\""},
	{"paths", "ssh -i ~/.ssh/id_ed25519 deploy@host\nSSH_PRIVATE_KEY_PATH=/etc/ssl/private/server.key\ntoken_file: ./secrets/token.txt\nGOOGLE_APPLICATION_CREDENTIALS=/var/run/secrets/gcp.json"},
	{"public keys and certs", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGDYKMR3JCYeaQhhqB88Yp9ZXozgoQv3PATTGD3aWoDo maria@thinkpad\n-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEN1E1IHlvlG/OdbpWsKrSGgAX1PSN\n-----END PUBLIC KEY-----\n-----BEGIN CERTIFICATE-----\nMIIDHzCCAgegAwIBAqDfnJmsgxhmwbgviIjprRd5XUGox5XM6N0GmoF9HTpXyqkv\n-----END CERTIFICATE-----"},
	{"fingerprint", "ED25519 key fingerprint is SHA256:UKsACCMY3ih40PcYFSC0VxyTgkoUKz8OEnM3sLqnutk.\nAre you sure you want to continue connecting (yes/no)?"},
	{"ports", "docker run -p 8080:80 nginx\nssh -p 2222 ops@bastion\npsql -h db -p 5432 -U app\nmysql -u root -p app_db"},
	{"secret refs", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: orders-db\n        key: password\n  - name: STRIPE_SECRET_KEY\n    valueFrom:\n      secretKeyRef:\n        key: api-key\n"},
	{"configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  LOG_LEVEL: debug\nbinaryData:\n  flags.env: bG9nX2xldmVsPWRlYnVnCndvcmtlcnM9NAo=\n"},
	{"masked log", "  username: acme-bot\n  password: ***\nLogin Succeeded!\ntoken=[REDACTED] removed from credential store"},
	{"fetch options", "fetch(url, { credentials: 'include', headers: { 'Content-Type': 'application/json' } })\ntoken_type: \"Bearer\"\ngrant_type=password&username=me"},
	{"cookies harmless", "Cookie: theme=dark; lang=en-US; _ga=GA1.2.1592437361.1710921600"},
	{"publishable key", "export const STRIPE_PUBLISHABLE_KEY = \"pk_live_51Vk8oqhkK5maggdGLn2bQK3WN6uc8COSX91du62DHsmRvBzEyMNG15QrykO9pUg9OsDaWDOQPhQ9uunwMpzNHOroPc6WbCkNXg52\";"},
	{"data uri", "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC\" />"},
	{"password stdin", "echo \"$CR_PAT\" | docker login ghcr.io -u acme-bot --password-stdin\ngh auth login --with-token < token.txt"},
	{"curl user vars", "curl -u \"$USER:$PASS\" https://x\ncurl --user \"${username}:${password}\" https://y\ncurl -u 'test:test' https://z"},
	{"bearer placeholders", "curl -H \"Authorization: Bearer <token>\" https://x\ncurl -H \"Authorization: Bearer $API_KEY\" https://y\ncurl -H \"Authorization: Bearer XXXXXXXXXXXX\" https://z"},
	{"markdown advice", "- Set `SECRET_KEY` to a long random string via the environment.\n- Rotate `API_TOKEN` values every 90 days.\n- The password must contain a digit."},
	{"prose", "the token is expired, and the password is incorrect. The API key was rotated yesterday."},
	{"versions", "SECRET_STORE_VERSION=1.2.3\npassword_policy: strict\nauth: true\nTOKEN_TTL=3600"},
	{"commit shas", "commit 649f1a1d764341b68aa48ff6510357d1f15ec977\nMerge: 87923f9 cc07360\n    fix: keys are 40-char hex like 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c"},
	{"hash asserts", "assert hashlib.sha256(b\"hello\").hexdigest() == \"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\""},
	{"mongo ids", "{\"_id\": {\"$oid\": \"00813682e2a6bfdf3ff2ecab\"}, \"owner\": {\"$oid\": \"b79dfd39135c93748669ea60\"}}"},
	{"maven coordinates", "notes = \"Maven - io.jsonwebtoken:jjwt-jackson-0.11.2\"\nimplementation 'io.jsonwebtoken:jjwt-api:0.12.5'"},
	{"kubectl", "kubectl get secret db -o yaml\nkubectl create secret generic stripe --from-literal=api-key=$STRIPE_KEY"},
	{"own output", "password=[REDACTED:password] token: [REDACTED:token] https://u:[REDACTED:db-uri]@h/db"},
	{"urls without password", "DATABASE_URL=postgres://localhost:5432/app_dev\nTEST_DATABASE_URL=postgres://postgres@127.0.0.1:55432/app_test\nPROD_DATABASE_URL=postgres://${DB_USER}:${DB_PASS}@${DB_HOST}:5432/app"},
	{"dockerfile env plain", "ENV NODE_ENV production\nENV PATH /usr/local/bin:$PATH\nset the env API_TOKEN to your token"},
	{"keytool default", "keytool -list -keystore cacerts -storepass changeit"},
	{"mysql port", "mysql -h db -P 3306 -u app -p app_db\nsqlcmd -S db -E"},
	{"elixir code", "params: { _csrf_token: csrfToken },\ntoken = Base.url_encode64(:crypto.strong_rand_bytes(24), padding: false)\ntoken = ReviewTokenStore.mint(project.id)"},
	{"prose no verb", "rotate the api key rotation schedule; the password field is required; token 12345678 expired"},
	{"prose what for", "the token for the session is refreshed every 15 minutes; the password for the db is in 1Password; " +
		"the api key for service billing is stored in vault/prod/api; the password was changed to meet the policy"},
	{"literals and ciphertexts", "#define PASSWORD 0x0dead1beef7cafe2\ndb.password=ENC(2dfRFqV/cS6TzRd+JyO=)\napi_token: ENC[AES256_GCM,data:Tr7o=,iv:1=,tag:2=,type:str]"},
	{"json values before commas", "{\"dummy\": \"api-custom-key\", \"c098f218-face-c0fe-dea0-0199cba\": \"not-a-key-in-the-line\"}"},
	{"openssl options", "openssl x509 -req -days 365 -passin \"file:server.pass\" -in server.csr -CA ca.pem"},
	{"sk- identifiers", "see https://scikit-learn.org and sk-learn-extras; class sk-button-primary-large-outline"},
}

func TestPositives(t *testing.T) {
	for _, c := range positives() {
		t.Run(c.name, func(t *testing.T) {
			out, fs := Redact(c.text)
			if len(fs) == 0 {
				t.Fatalf("nothing found in %q", c.text)
			}
			for _, sec := range c.secrets {
				if strings.Contains(out, sec) {
					t.Errorf("secret %q… survived:\n%s", sec[:min(6, len(sec))], out)
				}
				if !covered(c.text, sec, fs) {
					t.Errorf("secret %q… only partly masked:\n%s", sec[:min(6, len(sec))], out)
				}
			}
			if c.kind != "" {
				want := c.kind
				got := ""
				if len(c.secrets) > 0 {
					i := strings.Index(c.text, c.secrets[0])
					for _, f := range fs {
						if f.Start <= i && i < f.End {
							got = f.Kind
						}
					}
				} else {
					got = fs[0].Kind
				}
				if got != want {
					t.Errorf("kind = %q, want %q (%v)", got, want, fs)
				}
			}
		})
	}
}

func TestNegatives(t *testing.T) {
	for _, c := range negatives {
		t.Run(c.name, func(t *testing.T) {
			out, fs := Redact(c.text)
			if len(fs) > 0 {
				t.Errorf("false redaction %v:\n%s", fs, out)
			}
			if out != c.text {
				t.Errorf("text changed without findings")
			}
			if Contains(c.text) {
				t.Errorf("Contains = true")
			}
		})
	}
}

// covered reports whether every occurrence of sec lies inside findings.
func covered(text, sec string, fs []Finding) bool {
	for off := 0; ; {
		i := strings.Index(text[off:], sec)
		if i < 0 {
			return true
		}
		a, b := off+i, off+i+len(sec)
		for _, f := range fs {
			if f.Start <= a && a < f.End {
				a = f.End
			}
		}
		if a < b {
			return false
		}
		off += i + 1
	}
}

func TestReplacementFormat(t *testing.T) {
	pw := fk("", 16, alnum)
	in := "DB_PASSWORD=" + pw + "\nnext line"
	out, fs := Redact(in)
	if want := "DB_PASSWORD=[REDACTED:password]\nnext line"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	if len(fs) != 1 || fs[0] != (Finding{Kind: "password", Start: 12, End: 12 + len(pw)}) {
		t.Fatalf("findings = %+v", fs)
	}
	if Replacement("jwt") != "[REDACTED:jwt]" {
		t.Fatal(Replacement("jwt"))
	}
	if s := fmt.Sprint(fs); strings.Contains(s, pw) {
		t.Fatal("a finding prints the secret")
	}
}

func TestKindsListed(t *testing.T) {
	known := map[string]bool{}
	for _, k := range Kinds {
		known[k] = true
	}
	for _, c := range positives() {
		_, fs := Redact(c.text)
		for _, f := range fs {
			if !known[f.Kind] {
				t.Errorf("%s: kind %q is not in Kinds", c.name, f.Kind)
			}
		}
	}
}

func TestFindingsOrderedAndDisjoint(t *testing.T) {
	var all strings.Builder
	for _, c := range positives() {
		all.WriteString(c.text)
		all.WriteString("\n\n")
	}
	s := all.String()
	fs := Find(s)
	for i := 1; i < len(fs); i++ {
		if fs[i].Start < fs[i-1].End {
			t.Fatalf("findings %v and %v overlap or are out of order", fs[i-1], fs[i])
		}
	}
	for _, f := range fs {
		if !utf8.RuneStart(s[f.Start]) || (f.End < len(s) && !utf8.RuneStart(s[f.End])) {
			t.Fatalf("finding %v is not on rune boundaries", f)
		}
	}
}

func TestIdempotent(t *testing.T) {
	var texts []string
	for _, c := range positives() {
		texts = append(texts, c.text)
	}
	for _, c := range negatives {
		texts = append(texts, c.text)
	}
	for _, s := range texts {
		once, _ := Redact(s)
		twice, fs := Redact(once)
		if twice != once {
			t.Errorf("second pass changed the text (%v):\n%s\n---\n%s", fs, once, twice)
		}
	}
}

func TestEmptyAndTiny(t *testing.T) {
	for _, s := range []string{"", "a", "token", "key=1", "\xff\xfe", "password="} {
		out, fs := Redact(s)
		if out != s || len(fs) != 0 {
			t.Errorf("Redact(%q) = %q, %v", s, out, fs)
		}
	}
}

func TestUTF8Around(t *testing.T) {
	pw := fk("", 16, alnum)
	in := "пароль: ok\nDB_PASSWORD=" + pw + " — готово ✓\n密码 token=" + fk("", 40, alnum) + "。"
	out, fs := Redact(in)
	if len(fs) != 2 || !utf8.ValidString(out) || strings.Contains(out, pw) {
		t.Fatalf("got %q %v", out, fs)
	}
}
