#!/usr/bin/env python3
"""The CI pipelines in pipelines/ parse as YAML and keep their safety properties:
PR/MR jobs are diagnostic and never see the push token, production runs only on the default
branch, every GPU job passes --device, JUnit/report/summary are kept, forks cannot reach the
marks. yamllint (relaxed) and action-validator run too when installed."""
import os
import re
import shutil
import subprocess
import sys

import yaml

SRC = os.environ.get("KG_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..")
GH = os.path.join(SRC, "pipelines", "github-actions.yml")
GL = os.path.join(SRC, "pipelines", "gitlab-ci.yml")
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def scripts(job):
    """Every shell line of a GitHub job, joined."""
    return "\n".join(s.get("run", "") for s in job.get("steps", []))


def gh():
    doc = yaml.safe_load(open(GH))
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as true
    check(isinstance(on, dict) and {"pull_request", "push", "workflow_dispatch"} <= set(on),
          "github: triggers pull_request, push, workflow_dispatch")
    inputs = on["workflow_dispatch"]["inputs"]
    for k in ("case", "device_class", "reason"):
        check(inputs.get(k, {}).get("required") is True, "github: dispatch input %s required" % k)
    check(doc.get("permissions") == {"contents": "read"}, "github: read-only default permissions")
    jobs = doc["jobs"]
    check({"gate", "production", "lower-mark"} <= set(jobs), "github: jobs gate/production/lower-mark")
    for name, job in jobs.items():
        labels = job["runs-on"]
        check(isinstance(labels, list) and {"self-hosted", "linux", "gpu"} <= set(labels),
              "github: %s runs on self-hosted linux gpu" % name)
        for s in job["steps"]:
            if "actions/checkout" in s.get("uses", ""):
                check(s.get("with", {}).get("persist-credentials") is False,
                      "github: %s checkout does not persist credentials" % name)
            check("${{ inputs." not in s.get("run", "") and "${{ github.event.inputs" not in
                  s.get("run", ""), "github: %s: no input spliced into a script" % name)
        text = yaml.safe_dump(job)
        if name != "lower-mark":
            inc = job["strategy"]["matrix"]["include"]
            check(len(inc) >= 2 and all("model" in m and "device" in m for m in inc),
                  "github: %s matrix over GPU models and devices" % name)
            check("gpu${{ matrix.device }}" in labels, "github: %s targets the GPU's runner" % name)
            runs = [l for l in scripts(job).splitlines() if "kgate run" in l]
            check(runs and all("--device ${{ matrix.device }}" in l for l in runs),
                  "github: %s passes --device" % name)
            check("kgate report --from" in scripts(job) and "GITHUB_STEP_SUMMARY" in scripts(job),
                  "github: %s writes JUnit/summary" % name)
    gate, prod = jobs["gate"], jobs["production"]
    check(gate["if"].strip() == "github.event_name == 'pull_request'", "github: gate only on PRs")
    check("--diagnostic" in scripts(gate) and "--production" not in scripts(gate)
          and "--push" not in scripts(gate), "github: PR gate is diagnostic, never pushes")
    check("secrets." not in yaml.safe_dump(gate), "github: PR gate sees no secret")
    check("untrusted-gpu" in gate.get("environment", ""), "github: fork PRs need approval")
    check("github.event_name == 'push'" in prod["if"] and "default_branch" in prod["if"],
          "github: production only on default-branch pushes")
    check("--production" in scripts(prod) and "--push origin" in scripts(prod),
          "github: production advances and pushes")
    check(prod.get("environment") == "marks-writer" and
          jobs["lower-mark"].get("environment") == "marks-writer",
          "github: the token lives in the marks-writer environment")
    low = jobs["lower-mark"]
    check("workflow_dispatch" in low["if"] and "kgate marks lower" in scripts(low)
          and "--reason" in scripts(low), "github: dispatch lowers a mark with a reason")
    check("paths-ignore" in on["push"], "github: the marks commit does not re-trigger")


def gl():
    doc = yaml.safe_load(open(GL))
    tmpl = doc[".gpu"]
    check("gpu" in tmpl["tags"], "gitlab: GPU jobs tagged gpu")
    check(tmpl["artifacts"]["reports"]["junit"] == "kgate-junit.xml", "gitlab: junit report")
    check({"kgate-report.json", "kgate-summary.md"} <= set(tmpl["artifacts"]["paths"]),
          "gitlab: report JSON and summary kept")
    check(tmpl["artifacts"].get("when") == "always", "gitlab: artifacts kept on failure")
    check(len(tmpl["parallel"]["matrix"]) >= 2, "gitlab: matrix over GPU models")
    gate, prod, low = doc["gate"], doc["production"], doc["lower-mark"]
    for name, job in (("gate", gate), ("production", prod)):
        check(job["extends"] == ".gpu", "gitlab: %s extends .gpu" % name)
        check(all("--device \"$KGATE_DEVICE\"" in l for l in job["script"] if "kgate run" in l),
              "gitlab: %s passes --device" % name)
    check([r["if"] for r in gate["rules"]] == ['$CI_PIPELINE_SOURCE == "merge_request_event"'],
          "gitlab: gate only in MR pipelines")
    gs = "\n".join(gate["script"])
    check("--diagnostic" in gs and "--production" not in gs and "--push" not in gs,
          "gitlab: MR gate is diagnostic, never pushes")
    pr = prod["rules"][0]["if"]
    check("$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" in pr and "merge_request_event" in pr,
          "gitlab: production only on the default branch")
    ps = "\n".join(prod["script"])
    check("--production" in ps and "--push origin" in ps, "gitlab: production pushes the marks")
    check("lower-mark" in low["rules"][0]["if"] and "kgate marks lower" in "\n".join(low["script"]),
          "gitlab: manual pipeline lowers a mark")
    check(any("when" in r and r["when"] == "never" for r in doc["workflow"]["rules"]),
          "gitlab: the marks commit does not re-trigger")


def gl_expr(expr, env):
    """Evaluate a GitLab `rules:if` expression over env (the subset the pipeline uses:
    $VAR, "string", null, /regex/ operands; ==, !=, =~; && binds tighter than ||).
    An unset variable is null; a variable compared with a variable compares their values."""
    tok = re.compile(r'\s*(\$[A-Za-z_][A-Za-z0-9_]*|"[^"]*"|\'[^\']*\'|null|/(?:\\.|[^/])*/|==|!=|=~|&&|\|\||\(|\))')
    toks, pos = [], 0
    while pos < len(expr.rstrip()):
        m = tok.match(expr, pos)
        if not m:
            raise ValueError("gitlab rule: cannot read %r at %d" % (expr, pos))
        toks.append(m.group(1))
        pos = m.end()

    def val(t):
        if t.startswith("$"):
            return env.get(t[1:])
        if t == "null":
            return None
        if t[0] in "\"'":
            return t[1:-1]
        return t  # a /regex/

    def cmp(i):
        if toks[i] == "(":
            v, i = orx(i + 1)
            return v, i + 1
        a = toks[i]
        if i + 1 < len(toks) and toks[i + 1] in ("==", "!=", "=~"):
            op, b = toks[i + 1], toks[i + 2]
            if op == "=~":
                v = val(a) is not None and re.search(b[1:-1], val(a)) is not None
            else:
                v = (val(a) == val(b)) == (op == "==")
            return v, i + 3
        return val(a) not in (None, ""), i + 1

    def andx(i):
        v, i = cmp(i)
        while i < len(toks) and toks[i] == "&&":
            w, i = cmp(i + 1)
            v = v and w
        return v, i

    def orx(i):
        v, i = andx(i)
        while i < len(toks) and toks[i] == "||":
            w, i = andx(i + 1)
            v = v or w
        return v, i

    v, i = orx(0)
    if i != len(toks):
        raise ValueError("gitlab rule: trailing tokens in %r" % expr)
    return v


def gl_rules(rules, env):
    """The first matching rule's `when` (on_success by default); never when none matches."""
    for r in rules:
        if "if" not in r or gl_expr(r["if"], env):
            return r.get("when", "on_success")
    return "never"


def gl_jobs(doc, env):
    """The jobs a pipeline of env would have: [] when the workflow rules filter it out."""
    if gl_rules(doc["workflow"]["rules"], env) == "never":
        return []
    return sorted(n for n, j in doc.items() if isinstance(j, dict) and not n.startswith(".")
                  and "script" in j and gl_rules(j.get("rules", [{}]), env) != "never")


def gl_cases():
    """The workflow and job rules evaluated for the pipelines a forge starts."""
    doc = yaml.safe_load(open(GL))
    check(gl_expr('$A == "x" && $B =~ /^k/', {"A": "x", "B": "kg"}) and
          not gl_expr('$A == "x" && $B =~ /^k/', {"A": "x"}) and gl_expr("$C == null", {}) and
          gl_expr('$A == "y" || $A == $B', {"A": "x", "B": "x"}), "gitlab: the rule evaluator")
    main = {"CI_DEFAULT_BRANCH": "main", "CI_COMMIT_BRANCH": "main"}
    marks = "kgate: advance 3 marks (NVIDIA H200/sm_90)\n\nrun 42"
    lower = dict(main, CI_PIPELINE_SOURCE="web", KGATE_ACTION="lower-mark", KGATE_CASE="axpy/n=1/f32",
                 KGATE_DEVICE_CLASS="NVIDIA H200/sm_90", KGATE_REASON="new driver")
    cases = [
        ("push of a marks commit: no pipeline",
         dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE=marks), []),
        ("push of a lowering commit: no pipeline",
         dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE="kgate: lower axpy (reason)"), []),
        ("push of a code commit: production",
         dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE="Faster axpy"), ["production"]),
        ("web pipeline, lower-mark, HEAD a marks commit: lower-mark runs",
         dict(lower, CI_COMMIT_MESSAGE=marks), ["lower-mark"]),
        ("web pipeline, lower-mark, HEAD a code commit: lower-mark runs",
         dict(lower, CI_COMMIT_MESSAGE="Faster axpy"), ["lower-mark"]),
        ("web pipeline without KGATE_ACTION on a marks-commit HEAD: production",
         dict(main, CI_PIPELINE_SOURCE="web", CI_COMMIT_MESSAGE=marks), ["production"]),
        ("merge request: gate",
         {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_DEFAULT_BRANCH": "main",
          "CI_COMMIT_MESSAGE": marks}, ["gate"]),
        ("push of another branch: no pipeline",
         {"CI_PIPELINE_SOURCE": "push", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_BRANCH": "topic",
          "CI_COMMIT_MESSAGE": "wip"}, []),
    ]
    for what, env, want in cases:
        got = gl_jobs(doc, env)
        check(got == want, "gitlab rules: %s: jobs %s, expected %s" % (what, got, want))
    # The marks-commit filter is limited to push pipelines.
    for r in doc["workflow"]["rules"]:
        if "CI_COMMIT_MESSAGE" in r.get("if", ""):
            check('$CI_PIPELINE_SOURCE == "push"' in r["if"],
                  "gitlab: the commit-message rule applies to push pipelines only")


def gh_cases():
    """GitHub: the marks commit is filtered by paths on `push` only; nothing reads the commit
    message, so a workflow_dispatch on a marks-commit HEAD reaches lower-mark."""
    doc = yaml.safe_load(open(GH))
    on = doc.get("on", doc.get(True))
    check(not on.get("workflow_dispatch", {}).get("paths-ignore") and "paths-ignore" not in
          (on.get("workflow_dispatch") or {}), "github: workflow_dispatch is not filtered by paths")
    text = open(GH).read()
    check("head_commit.message" not in text and "commits.*.message" not in text,
          "github: no job is filtered on the commit message")
    low = doc["jobs"]["lower-mark"]["if"]
    check("workflow_dispatch" in low and "push" not in low, "github: lower-mark on dispatch only")


def tools():
    if shutil.which("yamllint"):
        r = subprocess.run(["yamllint", "-f", "parsable", "-d",
                            "{extends: relaxed, rules: {line-length: {max: 180}}}", GH, GL],
                           capture_output=True, text=True)
        errors = [l for l in r.stdout.splitlines() if "[error]" in l]
        check(not errors, "yamllint: " + "; ".join(errors))
    else:
        print("note: yamllint not installed: lint skipped")
    av = shutil.which("action-validator") or os.environ.get("KG_ACTION_VALIDATOR")
    if av and os.path.exists(av):
        r = subprocess.run([av, GH], capture_output=True, text=True)
        check(r.returncode == 0, "action-validator: " + r.stdout + r.stderr)
    else:
        print("note: action-validator not installed: GitHub schema check skipped")


for part in (gh, gl, gl_cases, gh_cases):
    try:
        part()
    except (yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError) as e:
        check(False, "%s: %s: %s" % (part.__name__, type(e).__name__, e))
tools()
print("test_pipelines: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
