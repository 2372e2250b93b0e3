package redact

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
)

// Kinds lists every kind a Finding can carry, most specific first.
var Kinds = []string{
	"private-key", "k8s-secret", "aws-access-key", "aws-secret-key", "aws-session-token",
	"github-token", "gitlab-token", "slack-token", "slack-webhook", "webhook",
	"stripe-key", "anthropic-key", "openai-key", "google-api-key", "google-oauth",
	"sendgrid-key", "twilio-key", "npm-token", "azure-key", "jwt", "age-key",
	"api-token", "db-uri", "basic-auth", "bearer", "auth-header", "cookie", "session",
	"password", "secret", "token", "api-key",
}

// rule is one detector. A rule runs only where one of its keywords occurs:
// either a regular expression over the lines around the keyword (re,
// accept) or a hand-written scanner over the keyword positions (scan).
type rule struct {
	name   string
	kind   string
	kw     []string // keywords matched case-insensitively
	kwCase []string // keywords matched exactly

	re        *regexp.Regexp
	group     int // submatch that is the secret (0 = whole match)
	back, fwd int // how far before / after the keyword a match can reach beyond its line
	// accept turns a match (absolute submatch offsets) into spans; nil
	// means acceptToken.
	accept func(r *rule, s string, m []int, add func(span) bool)
	// check is an extra test on the secret for acceptToken.
	check func(secret string) bool
	// noLeft skips acceptToken's left word-boundary test (secrets that
	// follow a '/' or '=' inside a larger token).
	noLeft bool
	// keepDot keeps a trailing '.' (unsigned JWTs end with one); otherwise
	// it is taken for sentence punctuation.
	keepDot bool
	// noDotBefore rejects matches preceded by '.' (file names such as
	// video_box.ico-7a38...png).
	noDotBefore bool

	// anchored rules match at a keyword (the keyword starts the match):
	// the expression runs once per keyword occurrence on at most maxLen
	// bytes from it. The others search the lines around their keywords.
	anchored  bool
	maxLen    int
	multiLine bool // an anchored match may span lines
	// plainToken: accept is acceptToken (set by init)
	plainToken bool

	scan func(s string, hits []int, add func(span) bool)
}

var rules []*rule

func init() {
	rules = buildRules()
	for _, r := range rules {
		if r.accept == nil {
			r.accept = acceptToken
			r.plainToken = true
		}
		if r.anchored {
			r.re = regexp.MustCompile(`^(?:` + r.re.String() + `)`)
			if r.maxLen == 0 {
				r.maxLen = 2048
			}
		}
	}
	indexKeywords()
}

func re(p string) *regexp.Regexp { return regexp.MustCompile(p) }

// acceptToken masks submatch r.group when it stands alone (no letter or
// digit glued on either side) and is not an example (xxxx, EXAMPLE, low
// diversity), then applies r.check.
func acceptToken(r *rule, s string, m []int, add func(span) bool) {
	st, en := m[2*r.group], m[2*r.group+1]
	if st < 0 || en <= st {
		return
	}
	for !r.keepDot && en > st && s[en-1] == '.' {
		en--
	}
	if !r.noLeft && st > 0 && isAlnum(s[st-1]) && !afterANSI(s, st) {
		return
	}
	if r.noDotBefore && st > 0 && s[st-1] == '.' {
		return
	}
	if en < len(s) && isAlnum(s[en]) {
		return
	}
	sec := s[st:en]
	if tokenPlaceholder(sec) || strings.Contains(sec, Marker) {
		return
	}
	if r.check != nil && !r.check(sec) {
		return
	}
	add(span{st, en, r.kind})
}

// vendorTokens are provider tokens with a distinctive prefix, reported as
// "api-token": each pattern with the literal keywords that must occur for
// it to match.
var vendorTokens = []struct {
	re string
	kw []string
}{
	{`do[opr]_v1_[a-f0-9]{64}`, []string{"dop_v1_", "doo_v1_", "dor_v1_"}},
	{`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`, []string{"pypi-AgEIcHlwaS5vcmc"}},
	{`hv[sb]\.[A-Za-z0-9_-]{24,}`, []string{"hvs.", "hvb."}},
	{`[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}`, []string{".atlasv1."}},
	{`dp\.(?:pt|st|ct|scim|audit|sa)\.[A-Za-z0-9]{40,}`, []string{"dp.pt.", "dp.st.", "dp.ct.", "dp.scim.", "dp.audit.", "dp.sa."}},
	{`lin_(?:api|oauth)_[A-Za-z0-9]{40}`, []string{"lin_api_", "lin_oauth_"}},
	{`sntry[su]_[A-Za-z0-9_=+/]{40,}`, []string{"sntrys_", "sntryu_"}},
	{`glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{60,}={0,2}`, []string{"glc_", "glsa_", "eyJrIjoi"}},
	{`dapi[a-f0-9]{32}(?:-[0-9])?`, []string{"dapi"}},
	{`PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`, []string{"PMAK-"}},
	{`NR(?:AK|JS|II|BR|AA|RA)-[A-Za-z0-9_-]{19,40}`, []string{"NRAK-", "NRJS-", "NRII-", "NRBR-", "NRAA-", "NRRA-"}},
	{`(?:pub)?key-[a-f0-9]{32}`, []string{"key-", "pubkey-"}},
	{`[a-f0-9]{32}-us[0-9]{1,2}`, []string{"-us"}},
	{`HRKU-[A-Za-z0-9_-]{30,}`, []string{"HRKU-"}},
	{`ops_eyJ[A-Za-z0-9+/_-]{100,}={0,3}`, []string{"ops_eyJ"}},
	{`A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}`, []string{"A3-"}},
	{`CLOJARS_[a-z0-9]{60}`, []string{"CLOJARS_"}},
	{`rubygems_[a-f0-9]{48}`, []string{"rubygems_"}},
	{`pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}`, []string{"pscale_"}},
	{`xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`, []string{"xkeysib-"}},
	{`FLW(?:PUBK|SECK)(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?`, []string{"FLWPUBK", "FLWSECK"}},
	{`access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}`, []string{"access_token$production$"}},
	{`dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`, []string{"dt0c01."}},
	{`figd_[A-Za-z0-9_-]{40,}`, []string{"figd_"}},
	{`ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}`, []string{"ntn_", "secret_"}},
	{`EZ[AT]K[A-Za-z0-9]{54}`, []string{"EZAK", "EZTK"}},
	{`tfp_[A-Za-z0-9_.=-]{59}`, []string{"tfp_"}},
	{`sha256~[A-Za-z0-9_-]{43}`, []string{"sha256~"}},
	{`fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}`, []string{"fo1_", "fm1", "fm2"}},
	{`sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_+=-]{22,60}|EAA[MC][A-Za-z0-9]{100,}`, []string{"sq0atp-", "sq0csp-", "EAAA", "EAAM", "EAAC"}},
	{`A{22}[A-Za-z0-9%]{80,}`, []string{"AAAAAAAAAAAAAAAAAAAAAA"}},
	{`AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}`, []string{"AKCp", "cmVmd"}},
	{`ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{100,}={0,2}`, []string{"ABSKQmVkcm9ja0FQSUtleS"}},
	{`tk-us-[A-Za-z0-9_-]{48}`, []string{"tk-us-"}},
	{`pat\.[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[0-9a-zA-Z]{20}`, []string{"pat."}},
	{`dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}`, []string{"dnkey-"}},
	{`duffel_(?:test|live)_[A-Za-z0-9_=-]{43}`, []string{"duffel_"}},
	{`fio-u-[A-Za-z0-9_=-]{64}`, []string{"fio-u-"}},
	{`ico-[A-Za-z0-9]{32}`, []string{"ico-"}},
	{`s-s4t2(?:ud|af)-[a-f0-9]{64}`, []string{"s-s4t2"}},
	{`pul-[a-f0-9]{40}`, []string{"pul-"}},
	{`pnu_[A-Za-z0-9]{36}`, []string{"pnu_"}},
	{`rdme_[a-z0-9]{70}`, []string{"rdme_"}},
	{`sm_[aps]at_[A-Za-z0-9]{16}`, []string{"sm_aat_", "sm_pat_", "sm_sat_"}},
	{`shippo_(?:live|test)_[a-f0-9]{40}`, []string{"shippo_"}},
	{`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, []string{"shpat_", "shpca_", "shppa_", "shpss_"}},
	{`AQVN[A-Za-z0-9_-]{35,38}|YC[A-Za-z0-9_-]{38}`, []string{"AQVN", "YC"}},
	{`t1\.[A-Za-z0-9_-]+=*\.[A-Za-z0-9_-]{86}=*`, []string{"t1."}},
	{`sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}`, []string{"sgp_"}},
	{`p8e-[a-zA-Z0-9]{32}`, []string{"p8e-"}},
	{`v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`, []string{"v1.0-"}},
	{`gsk_[A-Za-z0-9]{48,}`, []string{"gsk_"}},
	{`hf_[A-Za-z0-9]{34}|api_org_[A-Za-z0-9]{34}`, []string{"hf_", "api_org_"}},
	{`r8_[A-Za-z0-9]{37}`, []string{"r8_"}},
	{`xai-[A-Za-z0-9]{80}`, []string{"xai-"}},
	{`pplx-[A-Za-z0-9]{48}`, []string{"pplx-"}},
	{`tvly-[A-Za-z0-9-]{32,}`, []string{"tvly-"}},
	{`AT[AC]TT3[A-Za-z0-9_=-]{150,}|ATBB[A-Za-z0-9_=.-]{32}`, []string{"ATATT3", "ATCTT3", "ATBB"}},
	{`dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,32}`, []string{"dckr_pat_", "dckr_oat_"}},
	{`cf(?:at|ut|k)_[A-Za-z0-9]{40,}`, []string{"cfat_", "cfut_", "cfk_"}},
	{`nfp_[A-Za-z0-9]{36}`, []string{"nfp_"}},
	{`tgp_v1_[A-Za-z0-9_-]{43}`, []string{"tgp_v1_"}},
	{`llx-[A-Za-z0-9_-]{40,}`, []string{"llx-"}},
	{`ph[xsra]_[A-Za-z0-9]{40,}`, []string{"phx_", "phs_", "phr_", "pha_"}},
	{`sq[upa]_[a-f0-9]{40}`, []string{"squ_", "sqp_", "sqa_"}},
	{`IGQV[A-Za-z0-9_-]{100,}`, []string{"IGQV"}},
	{`sl\.[A-Za-z0-9_-]{100,}`, []string{"sl."}},
	{`PMAT-[A-Za-z0-9]{26}`, []string{"PMAT-"}},
	{`LTAI[A-Za-z0-9]{12,20}`, []string{"LTAI"}},
	{`akab-[a-z0-9]{16}-[a-z0-9]{16}`, []string{"akab-"}},
	{`BBDC-[A-Za-z0-9+/=_-]{40,}`, []string{"BBDC-"}},
	{`bedrock-api-key-[A-Za-z0-9+/=]{20,}`, []string{"bedrock-api-key-"}},
	{`SWM(?:TKN|KEY)-1-[A-Za-z0-9+/_-]{40,}`, []string{"SWMTKN-1-", "SWMKEY-1-"}},
	{`oy2[a-z0-9]{43}`, []string{"oy2"}},
	{`sk\.eyJ[A-Za-z0-9._-]{80,}`, []string{"sk.eyJ"}},
	{`sbp_[A-Za-z0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,}`, []string{"sbp_", "sb_secret_"}},
	{`lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}`, []string{"lsv2_"}},
	{`phx_[A-Za-z0-9]{43}`, []string{"phx_"}},
	{`live_[A-Za-z0-9_=-]{40}|(?:live|test)_(?:pub_[a-f0-9]{31}|[a-f0-9]{35})`, []string{"live_", "test_"}},
	{`[a-z0-9_]{2,}_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}`, []string{".acc_", ".acc-"}},
}

// dbSchemes are URI schemes reported as db-uri; other schemes with a
// password are basic-auth.
var dbSchemes = map[string]bool{
	"postgres": true, "postgresql": true, "mysql": true, "mariadb": true, "mongodb": true,
	"mongodb+srv": true, "redis": true, "rediss": true, "amqp": true, "amqps": true,
	"mssql": true, "sqlserver": true, "oracle": true, "clickhouse": true, "cockroachdb": true,
	"couchdb": true, "neo4j": true, "neo4j+s": true, "bolt": true, "cassandra": true,
	"memcached": true, "influxdb": true, "elasticsearch": true, "nats": true, "kafka": true,
	"db2": true, "snowflake": true, "presto": true, "trino": true, "vertica": true,
	"firebird": true, "sqlite": true, "timescaledb": true, "tidb": true, "cockroach": true,
}

func buildRules() []*rule {
	rs := []*rule{
		{name: "pem", kind: "private-key", kw: []string{"private key"}, scan: scanPEM},
		{name: "k8s", kind: "k8s-secret", kw: []string{"kind"}, scan: scanK8sSecret},
		{name: "aws-key-id", anchored: true, maxLen: 64, kind: "aws-access-key", kwCase: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re: re(`A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16}`)},
		{name: "aws-secret-pair", anchored: true, maxLen: 300, multiLine: true, kind: "aws-secret-key", kwCase: []string{"AKIA", "ASIA"}, fwd: 200,
			re:    re(`(?:AKIA|ASIA)[A-Z0-9]{16}["']?[ \t]*[,;:|\t \n][ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
			group: 1, check: func(v string) bool { c := classify(v); return c.lower > 0 && c.upper > 0 && c.digit > 0 }},
		{name: "aws-session", anchored: true, maxLen: 8192, kind: "aws-session-token", kwCase: []string{"IQoJb3JpZ2luX2", "FwoGZXIvYXdzE"},
			re: re(`(?:IQoJb3JpZ2luX2|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}`)},
		{name: "github", anchored: true, maxLen: 300, kind: "github-token", kwCase: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			re: re(`(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}`)},
		{name: "gitlab", anchored: true, maxLen: 300, kind: "gitlab-token",
			kwCase: []string{"glpat-", "gldt-", "glptt-", "glrt-", "glrtr-", "glcbt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-", "glcc-", "glwt-", "GR1348941"},
			re:     re(`gl(?:pat|dt|ptt|rtr?|cbt|ft|imt|agent|oas|soat|ffct|cc|wt)-[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20}`),
			check:  func(v string) bool { return !lowDiversity(v[strings.IndexAny(v, "-1")+1:]) }},
		{name: "slack", anchored: true, maxLen: 400, kind: "slack-token", kwCase: []string{"xox", "xapp-"},
			re: re(`(?:xox[abprs]|xoxe\.xox[bp]|xoxe)-[0-9]+-[A-Za-z0-9-]{8,}|xapp-[0-9]-[A-Za-z0-9-]{20,}`)},
		{name: "slack-webhook", anchored: true, maxLen: 300, kind: "slack-webhook", kw: []string{"hooks.slack.com"}, noLeft: true,
			re: re(`hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`)},
		{name: "webhook", anchored: true, maxLen: 600, kind: "webhook", noLeft: true,
			kw: []string{"discord.com/api/webhooks", "discordapp.com/api/webhooks", "webhook.office.com", "outlook.office.com/webhook"},
			re: re(`(?:discord(?:app)?\.com/api/webhooks/[0-9]+/|webhook\.office\.com/webhookb2/|outlook\.office\.com/webhook/)[^\s"'<>]{20,}`)},
		{name: "stripe", anchored: true, maxLen: 300, kind: "stripe-key", kwCase: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_"},
			re: re(`(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{20,}`)},
		{name: "anthropic", anchored: true, maxLen: 300, kind: "anthropic-key", kwCase: []string{"sk-ant-"},
			re: re(`sk-ant-(?:api|admin|sid|oat|ort)[0-9]{2}-[A-Za-z0-9_-]{20,}`)},
		{name: "openai", anchored: true, maxLen: 400, kind: "openai-key", kwCase: []string{"sk-"},
			re: re(`sk-(?:proj-|svcacct-|admin-|None-|or-v1-)?[A-Za-z0-9_-]{20,}`),
			check: func(v string) bool {
				b := v[3:]
				c := classify(b)
				return c.digit > 0 && c.lower+c.upper > 0 && !wordy(b)
			}},
		{name: "google-api-key", anchored: true, maxLen: 64, kind: "google-api-key", kwCase: []string{"AIza"}, re: re(`AIza[0-9A-Za-z_-]{35}`)},
		{name: "google-oauth", anchored: true, kind: "google-oauth", kwCase: []string{"GOCSPX-", "ya29.", "1//0"},
			re: re(`GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}`)},
		{name: "sendgrid", anchored: true, maxLen: 200, kind: "sendgrid-key", kwCase: []string{"SG."}, re: re(`SG\.[A-Za-z0-9_=.-]{40,}`),
			check: func(v string) bool { return !wordy(v[3:]) }},
		{name: "twilio", anchored: true, maxLen: 64, kind: "twilio-key", kwCase: []string{"SK", "AC"}, re: re(`(?:SK|AC)[0-9a-f]{32}`),
			check: func(v string) bool { c := classify(v[2:]); return c.digit > 0 && c.lower > 0 }},
		{name: "npm", anchored: true, maxLen: 64, kind: "npm-token", kwCase: []string{"npm_"}, re: re(`npm_[A-Za-z0-9]{36}`)},
		{name: "azure-conn", anchored: true, maxLen: 1024, kind: "azure-key", noLeft: true, group: 1,
			kw: []string{"accountkey=", "sharedaccesskey=", "sharedsecret=", "sharedaccesssignature=", "sig="},
			re: re(`(?i:AccountKey|SharedAccessKey|SharedSecret|SharedAccessSignature|sig)=([A-Za-z0-9+/%]{20,}(?:={1,2}|%3D){0,2})`),
			check: func(v string) bool {
				return !isPlaceholder(v) && entropy(v) >= 3.5
			}},
		{name: "azure-client-secret", kind: "azure-key", kwCase: []string{"Q~"},
			re: re(`[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`),
			check: func(v string) bool {
				c := classify(v)
				return c.lower > 0 && c.upper > 0 && c.digit > 0 && !strings.Contains(v, "~~")
			}},
		{name: "jwt", anchored: true, maxLen: 16384, kind: "jwt", kwCase: []string{"eyJ"}, keepDot: true,
			re: re(`ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_/+-]{10,}\.[A-Za-z0-9_/+=-]*`)},
		{name: "jwt-base64", anchored: true, maxLen: 16384, kind: "jwt", kwCase: []string{"ZXlK"},
			re: re(`ZXlK[A-Za-z0-9+/_-]{40,}={0,2}`), check: base64JWT},
		{name: "age", anchored: true, maxLen: 128, kind: "age-key", kwCase: []string{"AGE-SECRET-KEY-1"},
			re: re(`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`)},
	}
	for i, v := range vendorTokens {
		// the few patterns whose keyword is not at their start search
		// lines; the others are anchored at their prefix
		mid := strings.HasPrefix(v.re, "[")
		rs = append(rs, &rule{name: "vendor-" + strconv.Itoa(i), kind: "api-token", noDotBefore: true, anchored: !mid, maxLen: 1024,
			kwCase: v.kw, re: re(v.re), check: func(v string) bool { return !wordy(v) }})
	}

	rs = append(rs,
		// scheme://user:password@host
		&rule{name: "url-password", kind: "basic-auth", kw: []string{"://"}, back: 64,
			re:     re(`([A-Za-z][A-Za-z0-9+.-]*)://([^\s:/?#@"'<>\[\]]*):([^\s/"'<>]+)@[^\s/@"'<>]`),
			accept: acceptURLPassword},
		&rule{name: "bearer", anchored: true, maxLen: 4096, kind: "bearer", kw: []string{"bearer"}, group: 1, noLeft: true,
			re:    re(`[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+([A-Za-z0-9._~+/=-]{12,})`),
			check: func(v string) bool { return plausibleToken(v) }},
		&rule{name: "basic", anchored: true, maxLen: 1024, kind: "basic-auth", kw: []string{"basic"}, group: 1, noLeft: true,
			re: re(`[Bb][Aa][Ss][Ii][Cc][ \t]+([A-Za-z0-9+/]{6,}={0,2})`), check: basicCredentials},
		&rule{name: "authorization", anchored: true, maxLen: 4096, kind: "auth-header", kw: []string{"authorization"},
			re:     re(`(?i)authorization["']?[ \t]*[:=][ \t]*["']?(?:([A-Za-z][A-Za-z0-9_-]+)[ \t]+)?([^\s"'\x60,;]{8,})`),
			accept: acceptAuthorization},
		&rule{name: "cookie", anchored: true, maxLen: 8192, kind: "cookie", kw: []string{"cookie"},
			re: re(`(?i)cookie[ \t]*:[ \t]*([^\r\n]+)`), accept: acceptCookie},
		&rule{name: "cookie-flag", anchored: true, maxLen: 4096, kind: "cookie", kwCase: []string{"-b", "--cookie"},
			re: re(`(?:-b|--cookie)[ \t]+["']([^"'\r\n]+)["']`), accept: acceptCookie},
		&rule{name: "session", kind: "session", kw: []string{"sess", "sid=", "csrftoken", "xsrf-token", "remember_"}, group: 2, noLeft: true,
			re:    re(`(?i)(?:^|[^A-Za-z0-9_.-])((?:phpsessid|jsessionid|asp\.net_sessionid|aspsessionid[a-z]*|connect\.sid|sessionid|session_id|session-id|sessid|sid|laravel_session|_session_id|[a-z0-9_]*_session|csrftoken|xsrf-token|remember_token|remember_user_token))=([^;\s&"'<>,]{8,})`),
			check: func(v string) bool { return plausibleToken(v) }},
		&rule{name: "flag-p", kind: "password", kwCase: []string{"-p", "-P"}, scan: scanPasswordFlag},
		&rule{name: "flag-long", kind: "password",
			kw:     []string{"-password", "-passwd", "-pass", "-pwd", "-pw", "-token", "-secret", "-api-key", "-apikey", "-access-key", "-secret-key", "-key", "-credential", "-bearer", "_password", "_token", "_secret"},
			re:     re(`(?i)--?([A-Za-z0-9_-]*?(?:password|passwd|passphrase|pass|pwd|pw|token|secret|api-key|apikey|access-key|secret-key|key|credentials?|bearer))(?:=|[ \t]+)('[^'\n]*'|"[^"\n]*"|[^\s'"|;&]+)`),
			accept: acceptLongFlag},
		&rule{name: "flag-user", anchored: true, maxLen: 512, kind: "basic-auth", kwCase: []string{"-u", "--user"},
			re:     re(`(?:-u|--user)[ \t]*("[^"\n]*"(?::"[^"\n]*")?|'[^'\n]*'|[^\s'"]+(?:'[^'\n]*')?)`),
			accept: acceptUserFlag},
		&rule{name: "xml-add", anchored: true, maxLen: 1024, kind: "password", kw: []string{"key="}, fwd: 300,
			re:     re(`(?i)key[ \t]*=[ \t]*"([^"\n]+)"[ \t]+value[ \t]*=[ \t]*"([^"\n]*)"`),
			accept: acceptKeyValueAttr},
		&rule{name: "bundler", anchored: true, maxLen: 512, kind: "basic-auth", kw: []string{"bundle_"}, noLeft: true, group: 1,
			re:    re(`BUNDLE_[A-Z0-9_]+__[A-Z0-9]+[ \t]*[=:][ \t]*["']?[^\s:"']+:([^\s"';&]+)`),
			check: func(v string) bool { return len(v) >= 4 && !isPlaceholder(v) }},
		&rule{name: "from-literal", anchored: true, maxLen: 1024, kind: "secret", kw: []string{"--from-literal"}, group: 2, noLeft: true,
			re:    re(`--from-literal[= ]([A-Za-z0-9_.-]+)=([^\s'"]+)`),
			check: func(v string) bool { return !isPlaceholder(v) }},
		&rule{name: "netrc", anchored: true, maxLen: 512, multiLine: true, kind: "password", kw: []string{"machine"}, group: 1, noLeft: true, fwd: 300,
			re:    re(`(?i)machine[ \t]+\S+\s+(?:login[ \t]+\S+\s+)?password[ \t]+(\S+)`),
			check: func(v string) bool { return !isPlaceholder(v) }},
		// PostgreSQL's password file (~/.pgpass, PGPASSFILE), one
		// hostname:port:database:username:password per line, found by
		// the usual ports (or *) or in the lines after the file's name;
		// a hostname with a letter, dot or * tells it from times and
		// ratios; ':' and '\' in a password are escaped.
		&rule{name: "pgpass", kind: "password", kw: []string{":5432:", ":5433:", ":6432:", ":*:", "pgpass"}, group: 1, noLeft: true, fwd: 1024,
			re:    re(`(?m)(?:^|[\s"'\x60])[A-Za-z0-9_-]*[A-Za-z.*][A-Za-z0-9_.*-]*:(?:[0-9]{2,5}|\*):[^:\s]+:[^:\s]+:((?:\\.|[^:\s\\"'\x60])+)(?:$|[\s"'\x60])`),
			check: func(v string) bool { return !isPlaceholder(v) && v != "*" }},
		&rule{name: "telegram", kind: "api-token", kwCase: []string{":A"}, group: 1, noLeft: true,
			re:    re(`(?:^|[^0-9A-Za-z]|bot)([0-9]{8,10}:A[A-Za-z0-9_-]{34})(?:[^A-Za-z0-9_-]|$)`),
			check: func(v string) bool { return !wordy(v[strings.IndexByte(v, ':')+1:]) }},
		&rule{name: "pem-base64", anchored: true, maxLen: 16384, kind: "private-key", kwCase: []string{"LS0tLS1CRUdJTi"},
			re: re(`LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}`), check: base64PrivateKey},
		&rule{name: "putty", anchored: true, maxLen: 16384, multiLine: true, kind: "private-key", kw: []string{"private-lines:"}, group: 1, noLeft: true,
			re: re(`(?i)private-lines:[ \t]*[0-9]+\r?\n((?:[A-Za-z0-9+/=]+\r?\n?)+)`)},
		&rule{name: "directive", anchored: true, maxLen: 1024, kind: "secret",
			kw:     []string{"env ", "setenv", "requirepass", "masterauth", "configure set", "#define", "%define", "%global", "set "},
			re:     re(`(?i)(?:ENV|setenv|configure[ \t]+set|#define|%define|%global|set)[ \t]+([A-Za-z_][A-Za-z0-9_.]*)[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s"'=]+)|(requirepass|masterauth)[ \t]+("[^"\n]*"|'[^'\n]*'|\S+)`),
			accept: acceptDirective},
		&rule{name: "secure-string", anchored: true, maxLen: 1024, kind: "password", kw: []string{"convertto-securestring"}, group: 1, noLeft: true,
			re:    re(`(?i)ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?\\?["']([^"'\\\n]+)\\?["']`),
			check: func(v string) bool { return !isPlaceholder(v) && len(v) >= 4 }},
		&rule{name: "pass-arg", anchored: true, maxLen: 512, kind: "password", noLeft: true, group: 1,
			kw:    []string{"-passin", "-passout", "-pass ", "-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass"},
			re:    re(`-(?:pass(?:in|out)?[ \t]+["']?(?:pass|env):|(?:src|dest)?(?:store|key)pass[ \t]+["']?)([^\s'"]+)`),
			check: func(v string) bool { return !isPlaceholder(v) && len(v) >= 4 }},
		&rule{name: "sql", anchored: true, maxLen: 512, kind: "password", kw: []string{"identified", "password "},
			re:     re(`(?i)(?:identified[ \t]+(?:with[ \t]+[A-Za-z0-9_]+[ \t]+)?by|password[ \t]*=?)[ \t]*('[^'\n]+'|"[^"\n]+"|[^\s;'"(),]+)`),
			accept: acceptSQLPassword},
		&rule{name: "i18n", anchored: true, maxLen: 512, kind: "password", group: 2, noLeft: true,
			kw: []string{"비밀번호", "패스워드", "비번", "암호", "パスワード", "密码", "密碼", "口令", "пароль", "contraseña", "senha", "passwort", "kennwort", "mot de passe", "wachtwoord", "hasło", "lösenord", "salasana"},
			re: re(`(?i)(비밀번호|패스워드|비번|암호|パスワード|密码|密碼|口令|пароль|contraseña|senha|passwort|kennwort|mot de passe|wachtwoord|hasło|lösenord|salasana)(?:[은는이가]|[ \t]*(?:[:=：]|is|ist|est|es|é|是|は)?)[ \t]*["'「]?([^\s"'」，,。]{6,})`),
			check: func(v string) bool {
				c := classify(v)
				return !isPlaceholder(v) && !wordy(v) && c.digit > 0 && c.lower+c.upper > 0
			}},
		&rule{name: "assign", kind: "secret", kw: []string{"pass", "pwd", "pw", "psw", "pssw", "pasw", "secret", "token", "key", "auth", "cred", "salt", "signature", "seed", "dsn"},
			scan: scanAssign},
		&rule{name: "k8s-env", anchored: true, maxLen: 1024, multiLine: true, kind: "secret", kw: []string{"name:"}, fwd: 300,
			re:     re(`(?i)name:[ \t]*["']?([A-Za-z0-9_.-]+)["']?[ \t]*\r?\n[ \t]*(?:-[ \t]*)?value:[ \t]*("[^"\n]*"|'[^'\n]*'|[^\s"'#]+)`),
			accept: acceptNameValue},
		&rule{name: "prose", anchored: true, maxLen: 512, kind: "secret",
			kw: []string{"password", "passwd", "passphrase", "passcode", "api key", "api-key", "api_key", "apikey", "secret", "token", "access key"},
			// "password X", "password is X", "password is now X", "password
			// was changed to X", and with what it is for between, a verb
			// then required: "password for the staging db is now X".
			re: re(`(?i)(password|passwd|passphrase|passcode|api[ _-]?key|secret(?:[ _-]key)?|access[ _-]?key|access[ _-]?token|auth[ _-]?token|token)` +
				`(?:[ \t]+(?:for|of|on)(?:[ \t]+[A-Za-z0-9_.@:/-]+){1,4}?[ \t]+(` + proseVerb + `)|[ \t]+(` + proseVerb + `|of))?` +
				`[ \t]+["'\x60]?([^\s"'\x60]{6,})`),
			accept: acceptProse},
		&rule{name: "url-token-user", kind: "basic-auth", kw: []string{"://"}, group: 2, noLeft: true,
			re:    re(`([A-Za-z][A-Za-z0-9+.-]*)://([A-Za-z0-9_.~-]{16,})@[A-Za-z0-9]`),
			check: looksRandom},
	)
	return rs
}

// plausibleToken is the test for a bare credential after a scheme word
// (Bearer, sessionid=): not a word, not a placeholder, some digits or
// randomness.
func plausibleToken(v string) bool {
	if len(v) < 8 || isPlaceholder(v) || tokenPlaceholder(v) || wordy(v) || isPathOrURL(v) {
		return false
	}
	c := classify(v)
	return (c.digit > 0 && c.lower+c.upper > 0) || looksRandom(v)
}

// base64JWT reports a base64-encoded JWT (gitleaks' jwt-base64).
func base64JWT(v string) bool {
	v = strings.TrimRight(v, "=")
	n := len(v) / 4 * 4
	if n > 400 {
		n = 400
	}
	dec, err := base64.StdEncoding.DecodeString(v[:n])
	if err != nil {
		dec, err = base64.URLEncoding.DecodeString(v[:n])
		if err != nil {
			return false
		}
	}
	if !strings.HasPrefix(string(dec), "eyJ") {
		return false
	}
	for _, c := range dec {
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' && c != '=' && c != '+' && c != '/' {
			return false
		}
	}
	return true
}

// basicCredentials reports a base64 user:password pair.
func basicCredentials(v string) bool {
	raw := strings.TrimRight(v, "=")
	dec, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil || len(dec) < 3 {
		return false
	}
	colon := false
	for _, c := range dec {
		if c < 0x20 || c > 0x7e {
			return false
		}
		if c == ':' {
			colon = true
		}
	}
	return colon
}

func acceptURLPassword(r *rule, s string, m []int, add func(span) bool) {
	scheme := asciiLower(s[m[2]:m[3]])
	user := s[m[4]:m[5]]
	st, en := m[6], m[7]
	pass := s[st:en]
	if len(scheme) > 30 || len(user) > 256 || len(pass) > 512 {
		return
	}
	if isPlaceholder(pass) || isPlaceholder(strings.Trim(pass, "*")) {
		return
	}
	if strings.HasPrefix(pass, "//") || strings.ContainsAny(pass[:1], "$%{<[") {
		return
	}
	if user != "" && isPlaceholder(user) && len(pass) < 6 {
		return
	}
	kind := "basic-auth"
	if dbSchemes[scheme] || strings.HasPrefix(scheme, "jdbc") || strings.Contains(scheme, "sql") ||
		strings.HasPrefix(scheme, "mongodb") || strings.HasPrefix(scheme, "redis") || strings.HasPrefix(scheme, "amqp") {
		kind = "db-uri"
	}
	add(span{st, en, kind})
}

func acceptAuthorization(r *rule, s string, m []int, add func(span) bool) {
	st, en := m[4], m[5]
	v := s[st:en]
	for en > st && strings.IndexByte(".)]}>", s[en-1]) >= 0 && s[en-1] != '=' {
		en--
	}
	v = s[st:en]
	if isPlaceholder(v) || codeLike(v) || strings.Contains(v, Marker) {
		return
	}
	lv := asciiLower(v)
	if lv == "bearer" || lv == "basic" {
		return
	}
	if m[2] >= 0 {
		scheme := asciiLower(s[m[2]:m[3]])
		if scheme == "bearer" && !plausibleToken(v) {
			return
		}
		if !plausibleToken(v) && !looksRandom(v) && !(scheme == "basic" && basicCredentials(v)) {
			return
		}
	} else if !isUUID(v) && !looksRandom(v) && !plausibleToken(v) {
		return
	}
	add(span{st, en, r.kind})
}

// sensitiveCookie reports cookie names that carry sessions or credentials.
func sensitiveCookie(name string) bool {
	for _, w := range []string{"sess", "sid", "token", "auth", "jwt", "csrf", "xsrf", "remember", "login", "secret", "key", "identity", "credential", "oauth", "saml", "access", "refresh"} {
		if containsFold(name, w) {
			return true
		}
	}
	return false
}

// acceptCookie masks the sensitive or random values of a Cookie or
// Set-Cookie header (only the first pair of Set-Cookie is a cookie; the
// rest are attributes).
func acceptCookie(r *rule, s string, m []int, add func(span) bool) {
	setCookie := m[0] >= 4 && strings.EqualFold(s[m[0]-4:m[0]], "set-") && s[m[0]] != '-'
	vs, ve := m[2], m[3]
	i := vs
	for first := true; i < ve; first = false {
		j := strings.IndexByte(s[i:ve], ';')
		end := ve
		if j >= 0 {
			end = i + j
		}
		seg := s[i:end]
		if eq := strings.IndexByte(seg, '='); eq > 0 {
			name := strings.TrimSpace(seg[:eq])
			a, b := i+eq+1, end
			for a < b && (s[a] == ' ' || s[a] == '"') {
				a++
			}
			for b > a && (s[b-1] == ' ' || s[b-1] == '"') {
				b--
			}
			v := s[a:b]
			if b > a && !isPlaceholder(v) && !strings.Contains(v, Marker) &&
				((sensitiveCookie(name) && len(v) >= 6 && !wordy(v)) || looksRandom(v)) {
				add(span{a, b, r.kind})
			}
		}
		if setCookie && first {
			break
		}
		if j < 0 {
			break
		}
		i = end + 1
	}
}

// passwordCommands take a password after -p.
var passwordCommands = []string{"sshpass", "login", "mysql", "mariadb", "mongo", "mongosh", "mongodump", "mongorestore", "htpasswd", "pg_", "sqlcmd", "bcp", "mysqldump", "mysqladmin", "redis-cli", "vault", "openssl"}

var flagPRe = regexp.MustCompile(`^-[pP]([ \t]*)('[^'\n]*'|"[^"\n]*"|[^\s'"|;&]+)`)

// upperPCommands take a password after -P (for mysql -P is the port).
var upperPCommands = []string{"sqlcmd", "bcp", "isql", "osql"}

// scanPasswordFlag masks the value of -p after a command that takes a
// password there (sshpass, docker login, mysql -pSECRET...), not the -p of
// ports. The commands found on each line are looked up once per line.
func scanPasswordFlag(s string, hits []int, add func(span) bool) {
	lineStart, lineEnd := -1, -1
	cmdAt, mysqlAt, loginAt, sqlcmdAt := -1, -1, -1, -1
	for _, p := range hits {
		if p > 0 && s[p-1] != ' ' && s[p-1] != '\t' {
			continue
		}
		if p > lineEnd || lineStart < 0 {
			lineStart, lineEnd = lineBounds(s, p)
			line := s[lineStart:lineEnd]
			cmdAt, mysqlAt, loginAt = -1, -1, -1
			for _, c := range passwordCommands {
				if i := indexFold(line, c); i >= 0 {
					if cmdAt < 0 || lineStart+i < cmdAt {
						cmdAt = lineStart + i
					}
					if strings.HasPrefix(c, "mysql") || c == "mariadb" {
						if mysqlAt < 0 || lineStart+i < mysqlAt {
							mysqlAt = lineStart + i
						}
					}
				}
			}
			if i := indexFold(line, "login"); i >= 0 {
				loginAt = lineStart + i
			}
			sqlcmdAt = -1
			for _, c := range upperPCommands {
				if i := indexFold(line, c); i >= 0 && (sqlcmdAt < 0 || lineStart+i < sqlcmdAt) {
					sqlcmdAt = lineStart + i
				}
			}
		}
		if s[p+1] == 'P' && (sqlcmdAt < 0 || sqlcmdAt >= p) {
			continue
		}
		if cmdAt < 0 || cmdAt >= p {
			continue
		}
		m := flagPRe.FindStringSubmatchIndex(s[p:min(lineEnd, p+512)])
		if m == nil {
			continue
		}
		gap := m[3] > m[2]
		isMysql := mysqlAt >= 0 && mysqlAt < p
		if isMysql && gap && !(loginAt >= 0 && loginAt < p) {
			continue // mysql -p alone prompts; the next word is the database
		}
		if !gap && !isMysql {
			continue // -passin, -pkcs12...: another option, not -p VALUE
		}
		st, en := p+m[4], p+m[5]
		if s[st] == '\'' || s[st] == '"' {
			st++
			en--
		}
		if en <= st {
			continue
		}
		v := s[st:en]
		if v[0] == '-' || allDigits(v) || isPlaceholder(v) || strings.Contains(v, Marker) {
			continue
		}
		add(span{st, en, "password"})
	}
}

func acceptLongFlag(r *rule, s string, m []int, add func(span) bool) {
	if m[0] > 0 && strings.IndexByte(" \t\n(\"'", s[m[0]-1]) < 0 {
		return
	}
	name := s[m[2]:m[3]]
	st, en := m[4], m[5]
	quoted := false
	if s[st] == '\'' || s[st] == '"' {
		st++
		en--
		quoted = true
	}
	if en <= st {
		return
	}
	v := s[st:en]
	if v[0] == '-' || strings.Contains(v, Marker) {
		return
	}
	strength, kind := classifyKey(name)
	switch strength {
	case keyStrong:
		if !plausibleSecret(v, quoted) || (!quoted && codeLike(v)) {
			return
		}
	case keyWeak:
		if !looksRandom(v) {
			return
		}
	default:
		return
	}
	add(span{st, en, kind})
}

// acceptUserFlag masks the password of curl's -u/--user user:password (or
// the user part when the password is empty, as with API keys: -u key:).
func acceptUserFlag(r *rule, s string, m []int, add func(span) bool) {
	if m[0] > 0 && s[m[0]-1] != ' ' && s[m[0]-1] != '\t' {
		return
	}
	as, ae := m[2], m[3]
	arg := s[as:ae]
	// the separating colon: the first one outside the user's quotes
	colon := strings.IndexByte(arg, ':')
	if colon < 0 {
		return
	}
	trim := func(a, b int) (int, int) {
		for a < b && strings.IndexByte("\"'{", s[a]) >= 0 {
			a++
		}
		for b > a && strings.IndexByte("\"'}", s[b-1]) >= 0 {
			b--
		}
		return a, b
	}
	if isPlaceholder(arg) {
		return
	}
	us, ue := trim(as, as+colon)
	ps, pe := trim(as+colon+1, ae)
	user, pass := s[us:ue], s[ps:pe]
	st, en := ps, pe
	if pass == "" {
		if !plausibleToken(user) {
			return
		}
		st, en = us, ue
	} else if pass == user || len(pass) < 4 || isPlaceholder(pass) || strings.Contains(pass, Marker) ||
		(user != "" && strings.ContainsAny(user[:1], "$%<[")) {
		return
	}
	add(span{st, en, r.kind})
}

// acceptKeyValueAttr masks value="..." after key="...password..." (NuGet
// and .NET appSettings).
func acceptKeyValueAttr(r *rule, s string, m []int, add func(span) bool) {
	if m[3]-m[2] > maxKeyLen {
		return
	}
	strength, kind := classifyKey(s[m[2]:m[3]])
	st, en := m[4], m[5]
	v := s[st:en]
	// an attribute value is a literal, never a variable reference
	if strength == keyNone || len(v) < 4 || isPlaceholder(v) || isPathOrURL(v) || isVersion(v) || strings.ContainsAny(v, " \t") {
		return
	}
	if strength == keyWeak && !looksRandom(v) {
		return
	}
	add(span{st, en, kind})
}

// acceptNameValue masks the value of a Kubernetes-style env entry whose
// name is a secret: "- name: DB_PASSWORD\n  value: ...".
func acceptNameValue(r *rule, s string, m []int, add func(span) bool) {
	if m[3]-m[2] > maxKeyLen {
		return
	}
	strength, kind := classifyKey(s[m[2]:m[3]])
	if strength != keyStrong {
		return
	}
	st, en := m[4], m[5]
	quoted := false
	if s[st] == '"' || s[st] == '\'' {
		st++
		en--
		quoted = true
	}
	if en <= st {
		return
	}
	v := s[st:en]
	if (!quoted && codeLike(v)) || !plausibleSecret(v, quoted) {
		return
	}
	add(span{st, en, kind})
}

// proseVerb is what joins a secret's name to its value in a sentence: is,
// was, is now, would be, has been, (was) changed/set/reset/rotated to.
// (The longer forms come first: the first alternative that lets the whole
// expression match wins, and "was" alone would take "changed" for the value.)
const proseVerb = `(?:(?:has[ \t]+been|is|was|got)[ \t]+)?(?:set|changed|reset|rotated|updated)[ \t]+to|(?:is|was)(?:[ \t]+(?:now|still))?|would[ \t]+be|has[ \t]+been`

// acceptProse masks "my password is X", "with password X", "the api key
// was changed to X", "the password for the db is now X" when X looks like
// a credential (more strictly without a verb).
func acceptProse(r *rule, s string, m []int, add func(span) bool) {
	if m[0] > 0 && (isAlnum(s[m[0]-1]) || s[m[0]-1] == '_') {
		return
	}
	verb := m[4] >= 0 || m[6] >= 0
	st, en := m[8], m[9]
	for en > st && strings.IndexByte(".,;:!?)]}", s[en-1]) >= 0 {
		en--
	}
	if en-st < 6 {
		return
	}
	v := s[st:en]
	if isPlaceholder(v) || wordy(v) || codeLike(v) || isPathOrURL(v) || isVersion(v) || strings.Contains(v, Marker) {
		return
	}
	c := classify(v)
	if !verb {
		kinds := 0
		for _, k := range []int{c.lower, c.upper, c.digit, c.other} {
			if k > 0 {
				kinds++
			}
		}
		if !looksRandom(v) && !(len(v) >= 8 && kinds >= 3 && c.digit > 0) {
			return
		}
	} else if !(c.digit > 0 && c.lower+c.upper > 0) && !looksRandom(v) {
		return
	}
	_, kind := classifyKey(s[m[2]:m[3]])
	if kind == "" {
		kind = "secret"
	}
	add(span{st, en, kind})
}

// base64PrivateKey reports base64 that decodes to a PEM private key
// (kubeconfig client-key-data, Helm values).
func base64PrivateKey(v string) bool {
	v = strings.TrimRight(v, "=")
	n := min(len(v)/4*4, 200)
	dec, err := base64.StdEncoding.DecodeString(v[:n])
	return err == nil && strings.Contains(string(dec), "PRIVATE KEY")
}

// acceptDirective masks the value of space-separated settings: Dockerfile
// ENV KEY value, csh setenv, aws configure set KEY value (when the key
// names a secret), redis requirepass / masterauth.
func acceptDirective(r *rule, s string, m []int, add func(span) bool) {
	if m[0] > 0 && isAlnum(s[m[0]-1]) {
		return
	}
	var st, en int
	kind := "password"
	quoted := false
	if m[2] >= 0 {
		strength, k := classifyKey(s[m[2]:m[3]])
		if strength == keyNone {
			return
		}
		st, en, kind = m[4], m[5], k
		if strength == keyWeak && !looksRandom(strings.Trim(s[st:en], `"'`)) {
			return
		}
	} else {
		st, en = m[8], m[9]
	}
	if s[st] == '"' || s[st] == '\'' {
		st, en, quoted = st+1, en-1, true
	}
	if en <= st {
		return
	}
	v := s[st:en]
	if (!quoted && codeLike(v)) || !plausibleSecret(v, quoted) {
		return
	}
	add(span{st, en, kind})
}

// afterANSI reports whether s[:i] ends with an ANSI color escape
// (ESC [ 93 m), after which a token glued to the "m" still starts a word.
func afterANSI(s string, i int) bool {
	if i < 3 || s[i-1] != 'm' {
		return false
	}
	j := i - 2
	for j >= 0 && (isDigit(s[j]) || s[j] == ';') {
		j--
	}
	return j >= 1 && s[j] == '[' && s[j-1] == 0x1b
}

// acceptSQLPassword masks IDENTIFIED BY 'x' and PASSWORD 'x' in SQL.
func acceptSQLPassword(r *rule, s string, m []int, add func(span) bool) {
	if m[0] > 0 && (isAlnum(s[m[0]-1]) || s[m[0]-1] == '_') {
		return
	}
	st, en := m[2], m[3]
	quoted := s[st] == '\'' || s[st] == '"'
	if quoted {
		st, en = st+1, en-1
	} else if !containsFold(s[m[0]:st], "identified") {
		return // a bare word after PASSWORD: only after IDENTIFIED BY
	}
	if en <= st {
		return
	}
	v := s[st:en]
	if (!quoted && codeLike(v)) || !plausibleSecret(v, quoted) {
		return
	}
	add(span{st, en, "password"})
}
