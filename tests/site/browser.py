"""A headless Chromium driven over the Chrome DevTools Protocol, with no dependency.

Chromium's ``--remote-debugging-pipe`` speaks the protocol over two pipes (it reads commands on
file descriptor 3 and writes replies and events on 4, each message JSON ended by a NUL byte), so
neither a websocket client nor a WebDriver is needed. ``Browser`` opens one page, loads a URL,
evaluates JavaScript, takes screenshots, and collects what the page reported as an error: its
console errors, uncaught exceptions, and resources that failed to load.

``find_chromium`` looks for Debian's ``chromium-headless-shell`` or ``chromium`` (``make
browser`` installs the first).
"""
from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CANDIDATES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    # Debian installs the headless shell outside PATH in some versions
    for path in ("/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"):
        if os.access(path, os.X_OK):
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, executable: str, width: int = 1280, height: int = 900, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="rnnbench-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes() -> None:  # in the child: fd 3 reads our commands, fd 4 carries its replies
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [executable, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", "--allow-file-access-from-files", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "--hide-scrollbars", "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire_pipes, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._from_browser, selectors.EVENT_READ)
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.attached = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    # --- the protocol --------------------------------------------------------------------
    def _send(self, method: str, params: dict | None, attached: str | None) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if attached:
            message["sessionId"] = attached
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise BrowserError("no answer from Chromium in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe: {self.process.stderr.read().decode(errors='replace')[-500:]}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def _call(self, method: str, params: dict | None = None, attached: str | None = None) -> dict:
        wanted = self._send(method, params, attached)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def call(self, method: str, params: dict | None = None) -> dict:
        return self._call(method, params, self.attached)

    def _wait_event(self, method: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method:
                    return self._events.pop(i)
            self._events.append(self._receive(deadline))

    # --- what the tests use --------------------------------------------------------------
    def load(self, url: str) -> list[str]:
        """Navigate to ``url``, wait for its load event, and return the errors it reported."""
        self._events.clear()
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            return [f"navigation failed: {result['errorText']}"]
        self._wait_event("Page.loadEventFired")
        self.evaluate("new Promise(r => setTimeout(r, 50))", wait=True)  # let the page's scripts settle
        return self.errors()

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads reported since the last ``load``."""
        out = []
        for event in self._events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                out.append("exception: " + str(details.get("exception", {}).get("description") or details.get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                out.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())
            elif method == "Network.loadingFailed" and not params.get("canceled"):
                out.append(f"failed to load: {params.get('errorText')} ({params.get('type')})")
        return out

    def evaluate(self, expression: str, wait: bool = False):
        """The value of a JavaScript expression in the page (awaited when ``wait``)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": wait})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result.get("result", {}).get("value")

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params.update(clip={"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 4000), "scale": 1},
                          captureBeyondViewport=True)
        data = self.call("Page.captureScreenshot", params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self._call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
