"""Loads tilewave's --trace-out files into the trace engine of Chromium's
DevTools Performance panel and checks the viewer's own model of each.

Chromium is driven over the DevTools protocol on --remote-debugging-pipe
(fds 3 and 4, messages ended by NUL), so only the standard library is needed.
The bundled DevTools front end (devtools://devtools/bundled/) is opened and
its models/trace module (the Performance panel's importer: TraceModel and
Handlers.Threads.threadsInTrace, which make the panel's thread tracks) parses
each file's traceEvents. (Debian's chromium builds without catapult, so
chrome://tracing is not there to ask.)

Usage: trace_viewer_check.py CHROMIUM CASE... where CASE is
LABEL:MODE:TRACE_JSON:ANALYZE_JSON, MODE "loop" or "graph".
"""
import json
import os
import subprocess
import sys
import tempfile
import time

PARSE = r"""
(async () => {
  const T = await import('./models/trace/trace.js');
  const model = T.TraceModel.Model.createWithAllHandlers();
  const events = JSON.parse(window.__trace).traceEvents;
  await model.parse(events, {metadata: {}, isFreshRecording: false});
  const data = model.parsedTrace(model.lastTraceIndex()).data;
  const names = [...data.Meta.processNames.values()].map(e => e.args.name);
  return JSON.stringify({
    warnings: data.Warnings.perWarning instanceof Map ? [...data.Warnings.perWarning.keys()] : Object.keys(data.Warnings.perWarning),
    bounds: data.Meta.traceBounds,
    generic: data.Meta.traceIsGeneric,
    processes: names,
    threads: T.Handlers.Threads.threadsInTrace(data).map(t => ({
      pid: t.pid, tid: t.tid, name: t.name ?? null,
      cats: t.entries.map(e => e.cat), durs: t.entries.map(e => e.dur),
      roots: [...t.tree.roots].map(n => ({name: n.entry.name, children: n.children.length}))})),
  });
})()
"""


class Chromium:
    def __init__(self, browser, profile, log):
        to_chrome, self.w = os.pipe()
        self.r, from_chrome = os.pipe()
        # Chromium reads fd 3 and writes fd 4; move ours out of their way first.
        fds = [os.dup(f) for f in (to_chrome, from_chrome)]
        for f in (to_chrome, from_chrome):
            os.close(f)

        def child():
            os.dup2(fds[0], 3)
            os.dup2(fds[1], 4)

        self.proc = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--user-data-dir=" + profile, "--remote-debugging-pipe", "about:blank"],
            preexec_fn=child, close_fds=False, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        for f in fds:
            os.close(f)
        self.buf, self.id, self.session, self.errors = b"", 0, None, []

    def call(self, method, params=None, timeout=60):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            while b"\0" not in self.buf:
                if time.time() > deadline:
                    raise SystemExit(f"FAIL: no answer from chromium to {method} in {timeout} s")
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise SystemExit("FAIL: chromium closed the DevTools pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("method") == "Runtime.exceptionThrown":
                self.errors.append(m["params"]["exceptionDetails"].get("exception", {}).get("description", str(m)))
            elif m.get("method") == "Runtime.consoleAPICalled" and m["params"]["type"] in ("error", "warning", "assert"):
                self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in m["params"]["args"]))
            if m.get("id") == self.id:
                if "error" in m:
                    raise SystemExit(f"FAIL: {method}: {m['error']}")
                return m["result"]

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in r:
            raise SystemExit("FAIL: DevTools could not import the trace: " +
                             r["exceptionDetails"].get("exception", {}).get("description", str(r["exceptionDetails"])))
        return r["result"].get("value")

    def close(self):
        self.proc.kill()
        self.proc.wait()


def check(label, mode, view, analysis, step_us):
    fails = []
    kernels = analysis["total"]["kernels"]
    threads = {t["name"]: t for t in view["threads"]}
    gpu = threads.get("GPU stream (predicted)")
    host = [t for name, t in threads.items() if name and name.startswith("host issuing ops")]
    if view["warnings"]:
        fails.append(f"DevTools warns: {view['warnings']}")
    if not any(p.startswith("tilewave prediction") for p in view["processes"]):
        fails.append(f"the process is not named: {view['processes']}")
    if gpu is None:
        fails.append(f"no GPU lane among {list(threads)}")
    else:
        if len(gpu["cats"]) != kernels or set(gpu["cats"]) != {"kernel"}:
            fails.append(f"GPU lane: {len(gpu['cats'])} slices ({set(gpu['cats'])}) for {kernels} kernels")
        if len(gpu["roots"]) != len(gpu["cats"]):
            fails.append(f"GPU lane: {len(gpu['cats']) - len(gpu['roots'])} kernels drawn inside another")
        busy = sum(gpu["durs"])
        if abs(busy - analysis["total"]["gpu_busy_us"]) > 1e-3 * analysis["total"]["gpu_busy_us"]:
            fails.append(f"GPU lane busy {busy} us, the analysis {analysis['total']['gpu_busy_us']} us")
    if mode == "loop":
        if len(host) != 1:
            fails.append(f"a plain loop needs one host lane, DevTools has {list(threads)}")
        else:
            ops = host[0]["cats"].count("cpu_op")
            roots = host[0]["roots"]
            if ops != kernels:
                fails.append(f"host lane: {ops} ops for {kernels} kernels")
            if len(roots) != 1 or roots[0]["name"] != "ProfilerStep#0" or roots[0]["children"] != ops:
                fails.append(f"host lane: the ops are not all inside ProfilerStep#0: roots {roots}")
    else:
        step = [t for name, t in threads.items() if name and name.startswith("host (predicted: one CUDA graph")]
        if host or any("cpu_op" in t["cats"] for t in view["threads"]):
            fails.append(f"a CUDA graph has a host lane of ops: {list(threads)}")
        elif len(step) != 1 or step[0]["roots"] != [{"name": "ProfilerStep#0", "children": 0}]:
            fails.append(f"a CUDA graph's host lane should hold ProfilerStep#0 alone: {list(threads)}")
    rng = view["bounds"]["range"]
    if abs(rng - step_us) > 1e-6 * step_us + 1e-3:
        fails.append(f"DevTools' window is {rng} us, the step {step_us} us (events at ts 0 fall outside it)")
    for f in fails:
        print(f"FAIL: {label}: {f}")
    if not fails:
        lanes = ", ".join(f"'{t['name']}' {len(t['cats'])}" for t in view["threads"])
        print(f"ok: {label}: DevTools reads {len(view['threads'])} lanes ({lanes} slices) for {kernels} kernels, "
              f"window {rng:.1f} us = the step, no warnings")
    return not fails


def main():
    browser, cases = sys.argv[1], sys.argv[2:]
    profile = tempfile.mkdtemp()
    with open(os.path.join(profile, "chromium.log"), "w") as log:
        chrome = Chromium(browser, profile, log)
        try:
            target = chrome.call("Target.createTarget", {"url": "devtools://devtools/bundled/devtools_app.html"})
            chrome.session = chrome.call("Target.attachToTarget",
                                         {"targetId": target["targetId"], "flatten": True})["sessionId"]
            chrome.call("Runtime.enable")
            for _ in range(100):  # until the front end has loaded
                if chrome.evaluate("document.readyState") == "complete":
                    break
                time.sleep(0.1)
            version = chrome.call("Browser.getVersion")["product"]
            print(f"viewer: the Performance panel's trace engine of {version}'s bundled DevTools")
            ok = True
            for case in cases:
                label, mode, trace_path, analysis_path = case.split(":", 3)
                text = open(trace_path).read()
                step_us = json.loads(text)["otherData"]["step_us"]
                chrome.evaluate("window.__trace = " + json.dumps(text) + "; 0")
                chrome.errors.clear()
                view = json.loads(chrome.evaluate(PARSE))
                if chrome.errors:
                    print(f"FAIL: {label}: DevTools logged: {chrome.errors}")
                    ok = False
                ok = check(label, mode, view, json.load(open(analysis_path)), step_us) and ok
        finally:
            chrome.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
