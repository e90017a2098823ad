#!/bin/sh
# CPU time (user + sys) of building the `tilewave` target from scratch, the
# README's first command less apt-get and the analysis (docs/performance.md
# "Build and test times"). CPU time, not wall time, so that it can be compared
# on a machine other builds share. Every compile and the link run under a
# launcher that logs its own CPU time; the whole build is timed too (it adds
# protoc, the archives and make itself).
# Prints the totals, the ten most expensive compiles and the last ones to end.
# Usage: tests/bench/build_cpu_time.sh [BUILD_DIR] [JOBS]   (build-cputime, 2)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/build-cputime}
jobs=${2:-2}
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac
rm -rf "$dir"
mkdir -p "$dir"
log=$dir/compile_times.log
launcher=$dir/timed_launcher.sh
# One line per compile or link: user s, sys s, wall s, start and end (s since
# the epoch), and what it built (the source, or the linked output).
cat > "$launcher" <<EOF
#!/bin/sh
what=
prev=
for arg in "\$@"; do
  [ "\$prev" = -c ] && what=\$arg
  [ "\$prev" = -o ] && [ -z "\$what" ] && out=\$arg
  prev=\$arg
done
what=\${what:-link:\${out:-?}}
t=\$(mktemp)
start=\$(date +%s.%N)
status=0
/usr/bin/time -o "\$t" -f "%U %S %e" "\$@" || status=\$?
echo "\$(tail -1 "\$t") \$start \$(date +%s.%N) \$what" >> "$log"
rm -f "\$t"
exit \$status
EOF
chmod +x "$launcher"
cd "$root"
/usr/bin/time -o "$dir/configure.time" -f "%U %S %e" \
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_LINKER_LAUNCHER="$launcher" > "$dir/configure.log"
/usr/bin/time -o "$dir/build.time" -f "%U %S %e" \
  cmake --build "$dir" -j"$jobs" --target tilewave > "$dir/build.log"
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- analyzer CMakeLists.txt || echo ' + uncommitted changes'); cores: $(nproc); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v root="$root/" -v dir="$dir/" '
  FILENAME ~ /configure.time$/ { configure = $1 + $2; next }
  FILENAME ~ /build.time$/ { build = $1 + $2; build_wall = $3; next }
  {
    cpu = $1 + $2; name = $6; sub(root, "", name); sub(dir, "BUILD/", name)
    if (name ~ /^link:/) link += cpu; else { compiles += cpu; n++ }
    line[NR] = sprintf("%8.1f %8.1f  %s", cpu, $3, name)
    key[NR] = cpu; ends[NR] = $5; if (first == "" || $4 < first) first = $4
  }
  END {
    printf "CPU s (user+sys): whole build %.1f = %d compiles %.1f + links %.1f + the rest %.1f; configure %.1f\n",
      build, n, compiles, link, build - compiles - link, configure
    printf "wall s of the build (not comparable on a shared machine): %.1f\n", build_wall
    print "ten most expensive:\n   CPU s   wall s  source"
    for (k = 0; k < 10; k++) {
      best = 0
      for (i in key) if (!(i in shown) && (best == 0 || key[i] > key[best])) best = i
      if (best == 0) break
      shown[best] = 1; print line[best]
    }
    print "last five to end (s after the first compile started):"
    for (k = 0; k < 5; k++) {
      best = 0
      for (i in ends) if (!(i in done) && (best == 0 || ends[i] > ends[best])) best = i
      if (best == 0) break
      done[best] = 1; printf "%8.1f  %s\n", ends[best] - first, substr(line[best], 20)
    }
  }' "$dir/configure.time" "$dir/build.time" "$log"
