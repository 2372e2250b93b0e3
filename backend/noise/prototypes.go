package noise

// QualityPrototypes describe knowledge worth keeping from a coding agent's
// conversation. They are static: what is worth keeping does not drift.
var QualityPrototypes = []string{
	"important technical decision with reasoning and rationale: we chose this option over the alternative because of a constraint",
	"debugging solution: the root cause of the bug was found and the fix that resolved it",
	"configuration setup, deployment and environment instructions: which file, variable, port or setting to use and why",
	"project convention: in this codebase we always do it this way and never that way",
	"invariant of the system that must hold, and what breaks when it does not",
	"user preference about how the assistant should work in this repository",
	"the service depends on a specific version, flag or setting, otherwise it fails",
	"architecture of the project: which component owns what, where the data lives and how the parts connect",
	"a gotcha or pitfall in this project and how to avoid it next time",
	"the reason a test, build or deploy fails in CI and the setting that fixes it",
	"operational constraint: do not enable, deploy or run this in production until a condition holds",
	"where something lives: the file, table, bucket, service or module that holds it and who reads it",
}

// NoisePrototypes describe what an agent says that is not worth keeping:
// acknowledgements, status lines, announcements of the next step, apologies,
// pleasantries, raw command output. The rejection buffer adds learned ones.
var NoisePrototypes = []string{
	"okay, got it, I will do that now",
	"sure, working on it, running the command now",
	"let me take a look at the file first and I will get back to you",
	"done, the change has been applied",
	"the tests are still running, please wait a moment",
	"sorry about that, you are right, I will fix it",
	"thanks, glad it worked, let me know if you need anything else",
	"hello, how can I help you today",
	"next I will update the remaining files and then run the tests again",
	"here is the output of the command",
	"pushed the branch and opened the pull request",
	"I will check the logs and report back",
	"build finished, all checks passed",
	"good question, let me dig into that before answering",
}
