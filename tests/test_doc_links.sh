#!/usr/bin/env bash
# scripts/doc-links.py: every relative link and anchor in the tree's *.md resolves; and the
# checker itself catches a planted missing file, a missing anchor and a repeated heading's
# anchor, while it leaves code, URLs and GitHub's anchor spelling alone.
. "$(dirname "$0")/lib.sh"
L=$SRC/scripts/doc-links.py
PY=${KG_PYTHON3:-python3}

check "the tree's docs" 0 '0 broken link' -- "$PY" "$L" --root "$SRC"

mkdir -p "$T/clean/docs/sub" "$T/bad"
cat >"$T/clean/README.md" <<'MD'
# Top
See [the guide](docs/sub/guide.md#proving-the-gate-scriptsbench-proofsh), [a repeat](docs/sub/guide.md#twice-1),
[root](/docs/sub/guide.md), ![pic](docs/sub/pic.png), [web](https://example.com/x#y), [here](#top),
[explicit](docs/sub/guide.md#custom-id), `[code](nowhere.md)`.

```
[fenced](missing.md)
```
[ref]: docs/sub/guide.md#twice
MD
cat >"$T/clean/docs/sub/guide.md" <<'MD'
# Guide
## Proving the gate: `scripts/bench-proof.sh`
## Twice
## Twice
<a id="custom-id"></a>
Back to [the top](../../README.md#top).
MD
: >"$T/clean/docs/sub/pic.png"
check "a clean planted tree" 0 '2 file\(s\), 0 broken' -- "$PY" "$L" --root "$T/clean"

cp -r "$T/clean/." "$T/bad/"
printf '[gone](docs/sub/missing.md)\n[no anchor](docs/sub/guide.md#nowhere)\n[third](docs/sub/guide.md#twice-2)\n' >>"$T/bad/README.md"
check "a missing file" 1 'README.md:1[0-9]: docs/sub/missing.md: no such file' -- "$PY" "$L" --root "$T/bad"
expect_grep 'docs/sub/guide.md#nowhere: no heading or id "nowhere"' "$T/out" "a missing anchor"
expect_grep 'twice-2: no heading' "$T/out" "an anchor past the repeats"
expect_grep '3 broken link' "$T/out" "every planted link counted"
check "a usage error" 2 'unknown flag --bogus' -- "$PY" "$L" --bogus
finish
