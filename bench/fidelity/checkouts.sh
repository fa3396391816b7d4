#!/usr/bin/env bash
# Clone every repository of the fidelity corpus at its pinned commit into $1 (default: $REAL_REPOS, else
# bench/real/checkouts), one directory per repository, named like its corpus entry. An existing checkout at the
# pinned commit is left as it is; one at another commit is checked out at the pinned one.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-${REAL_REPOS:-bench/real/checkouts}}
mkdir -p "$target"
python3 - "$target" <<'PY'
import json, subprocess, sys
from pathlib import Path
target = Path(sys.argv[1])
for repo in json.load(open("bench/fidelity/corpus.json"))["repositories"]:
    where = target / repo["name"]
    if not where.exists():
        print(f"cloning {repo['repository']} into {where}", flush=True)
        subprocess.run(["git", "clone", "--quiet", "--filter=blob:none", f"https://github.com/{repo['repository']}",
                        str(where)], check=True)
    head = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if head != repo["commit"]:
        subprocess.run(["git", "-C", str(where), "checkout", "--quiet", repo["commit"]], check=True)
    print(f"{repo['name']}: {repo['commit'][:12]}")
PY
