#!/usr/bin/env bash
# The seven faults of the third fault campaign, tried from outside the project: a fresh
# folder and the installed `treebo` command. Prints one line per case; the fault suite
# (pytest -m fault) holds the same checks as tests. Usage: bash benchmarks/faults_from_outside.sh
# (PYTHON=path/to/python to choose the interpreter). Needs bc and pgrep.
PY="${PYTHON:-python}"
set -u
cd "$(mktemp -d)"
echo "== 1 shell injection"
cat > space.toml <<'T'
[[dimensions]]
name = "c"
type = "Categorical"
categories = ["x; touch PWNED1; echo y", "$(touch PWNED2)", "a'b; touch PWNED3", "a\"b; touch PWNED4; echo \""]
T
for tpl in "echo '{c}' 1" 'echo "{c}" 1' 'echo {c} 1'; do
  $PY -m treebo minimize --command "$tpl" --shell --space space.toml --n-calls 8 --quiet --seed 0 >/dev/null 2>&1
  echo "template [$tpl] exit=$? markers: $(ls PWNED* 2>/dev/null | wc -l)"
done
echo "== 2 detached child and --timeout"
cat > s1.toml <<'T'
[[dimensions]]
name = "x"
type = "Real"
low = 0.0
high = 1.0
T
start=$(date +%s.%N)
timeout 120 $PY -m treebo minimize --command 'setsid sleep 1111.5 & echo 1; sleep 1000' --shell --space s1.toml --n-calls 2 --timeout 2 --quiet --catch treebo.command.CommandError > out2.txt 2>&1; code=$?
echo "exit=$code seconds=$(echo "$(date +%s.%N) - $start" | bc) left: $(pgrep -f 'sleep 1111.5' | wc -l)"
echo "== 3 report under a file-size limit"
$PY -m treebo minimize branin --n-calls 8 --storage st.db --quiet --seed 0 >/dev/null 2>&1
$PY -m treebo report st.db -o r.html >/dev/null 2>&1; before=$(sha256sum r.html | cut -c1-16); size=$(stat -c %s r.html)
$PY -m treebo minimize branin --n-calls 12 --storage st.db --quiet --seed 0 >/dev/null 2>&1
(ulimit -f $((size / 1024 / 2)); $PY -m treebo report st.db -o r.html) 2> err3.txt; code=$?
echo "exit=$code intact=$([ "$(sha256sum r.html | cut -c1-16)" = "$before" ] && echo yes || echo NO) stderr lines=$(wc -l < err3.txt) traceback=$(grep -c Traceback err3.txt) leftovers=$(ls -A | grep -c '^\.')"
echo "== 4 deeply nested space file"
$PY -c "print('{\"dimensions\": ' + '[' * 100000 + ']' * 100000 + '}')" > deep.json
$PY -m treebo minimize --command "echo {x}" --space deep.json --n-calls 3 2> err4.txt >/dev/null; echo "json exit=$? lines=$(wc -l < err4.txt) traceback=$(grep -c Traceback err4.txt): $(head -c 150 err4.txt)"
$PY -c "print('a = ' + '[' * 100000 + ']' * 100000)" > deep.toml
$PY -m treebo ask --storage d.db --space deep.toml 2> err4b.txt >/dev/null; echo "toml exit=$? lines=$(wc -l < err4b.txt) traceback=$(grep -c Traceback err4b.txt): $(head -c 150 err4b.txt)"
echo "== 5 crafted stored category"
cat > cat.toml <<'T'
[[dimensions]]
name = "k"
type = "Categorical"
categories = ["a", "b"]
T
$PY -m treebo ask --storage c.db --space cat.toml >/dev/null 2>&1
$PY - <<'P'
import json, sqlite3
c = sqlite3.connect("c.db", isolation_level=None)
(v,) = c.execute("SELECT value FROM study WHERE key='space'").fetchone()
d = json.loads(v); d["dimensions"][0]["categories"][0] = "-" * 10**6 + "1"
c.execute("UPDATE study SET value=? WHERE key='space'", (json.dumps(d),))
P
for cmd in "ask --storage c.db" "show c.db" "ask --storage c.db --space cat.toml"; do
  $PY -m treebo $cmd 2> err5.txt >/dev/null; echo "$cmd exit=$? chars=$(wc -c < err5.txt) traceback=$(grep -c Traceback err5.txt)"
done
echo "== 6 a 10,000-dimension space: six evaluations"
$PY - <<'P'
import resource, time
import treebo
start = time.perf_counter()
res = treebo.minimize(lambda x: sum(v * v for v in x), [(-1.0, 1.0)] * 10_000, n_calls=6,
                      n_initial_points=5, random_state=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"evaluations={len(res.func_vals)} peak={peak:.0f} MiB seconds={time.perf_counter() - start:.1f}")
P
echo "== 7 --checkpoint-dir naming a file"
printf 'def train(x, epochs, checkpoint):\n    open("ran", "w").close()\n    return x["a"] ** 2 + 1 / epochs\ntrain.space = {"a": (-1.0, 1.0)}\n' > train.py
echo file > ck
$PY -m treebo minimize train.py:train --budget-param epochs --min-budget 1 --max-budget 9 --total-budget 2 --checkpoint-dir ck --quiet 2> err7.txt >/dev/null
echo "exit=$? ran=$([ -e ran ] && echo YES || echo no): $(cat err7.txt)"
