#!/usr/bin/env python3
"""Each layer's include path (issue #26): only the command line's library sees runners/
(cli/cli.h). A gate's file compiled with its own flags (from compile_commands.json) including
"cli/cli.h" must fail for want of the header (the planted defect); the same file including the
gate interface and the core must compile (the clean case). The command line's own flags find
cli/cli.h. The direction of every other include is scripts/layers.py's (test_layers).

    tests/test_layer_includes.py BUILD_DIR
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile


def command_of(entries, suffix):
    for e in entries:
        if e["file"].replace(os.sep, "/").endswith(suffix):
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            return e["directory"], [a for a in args if "ccache" not in os.path.basename(a)], e["file"]
    return None, None, None


def compiles(directory, args, src_file, text):
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as fh:
        fh.write(text)
        probe = fh.name
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a in ("-c",) or a.startswith("-o"):
            continue
        out.append(probe if os.path.normpath(os.path.join(directory, a)) == os.path.normpath(src_file) else a)
    r = subprocess.run(out + ["-fsyntax-only"], cwd=directory, capture_output=True, text=True)
    os.unlink(probe)
    return r.returncode == 0, r.stderr


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        print("test_layer_includes: no %s (CMAKE_EXPORT_COMPILE_COMMANDS)" % path)
        return 77
    entries = json.load(open(path))
    fails = 0
    gate_dir, gate_args, gate_src = command_of(entries, "gates/parity/parity_gate.c")
    cli_dir, cli_args, cli_src = command_of(entries, "runners/cli/main.c")
    if not gate_args or not cli_args:
        print("test_layer_includes: parity_gate.c or runners/cli/main.c not in %s" % path)
        return 2
    checks = [
        ("a gate including the gate interface and the core", gate_dir, gate_args, gate_src,
         '#include "gate.h"\n#include "core/kg_core.h"\n', True),
        ("a gate including cli/cli.h", gate_dir, gate_args, gate_src,
         '#include "cli/cli.h"\n', False),
        ("the command line including cli/cli.h", cli_dir, cli_args, cli_src,
         '#include "cli/cli.h"\n', True),
    ]
    for what, d, args, src, text, want in checks:
        ok, err = compiles(d, args, src, text)
        if ok != want:
            fails += 1
            print("FAIL: %s %s" % (what, "does not compile:\n" + err if want else "compiles"))
        elif not want and "cli/cli.h" not in err:
            fails += 1
            print("FAIL: %s fails, but not for the header:\n%s" % (what, err))
        else:
            print("ok: %s %s" % (what, "compiles" if want else "is refused (no such header)"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
