"""Headless Chromium driven through the DevTools protocol over a pipe (--remote-debugging-pipe):
no WebSocket, no driver, nothing but the standard library. Used by the browser build's tests.

    with Chromium(width, height) as browser:
        page = browser.open(url)
        page.evaluate("1 + 1")
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class ChromiumError(RuntimeError):
    pass


class Chromium:
    def __init__(self, width=1280, height=720, scale=1.0, extra_args=()):
        self.width, self.height, self.scale = width, height, scale
        self.extra_args = list(extra_args)
        self.process = None
        self.profile = None
        self.next_id = 0
        self.buffer = b""
        self.events = []
        self.console = []  # every console message, in order

    def __enter__(self):
        executable = find_chromium()
        if not executable:
            raise ChromiumError("chromium not found: run third_party/install-deps.sh test")
        self.profile = tempfile.mkdtemp(prefix="attnviz-chromium-")
        # fd 3: the browser reads commands; fd 4: it writes replies and events.
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        args = [executable, "--headless=new", "--no-sandbox", "--disable-gpu-sandbox",
                "--remote-debugging-pipe", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
                "--disable-dev-shm-usage",  # a container's small /dev/shm would crash it
                "--disable-backgrounding-occluded-windows", "--mute-audio",
                f"--user-data-dir={self.profile}",
                f"--window-size={self.width},{self.height}",
                f"--force-device-scale-factor={self.scale}"] + self.extra_args + ["about:blank"]

        def child_fds():  # the two ends at fds 3 and 4, wherever they were
            read_end = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, preexec_fn=child_fds,
                                        pass_fds=(3, 4))
        os.close(to_browser_read)
        os.close(from_browser_write)
        return self

    def __exit__(self, *exc):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        if self.process:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.profile:
            shutil.rmtree(self.profile, ignore_errors=True)

    # --- the protocol ---------------------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError("no answer from Chromium in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise ChromiumError("Chromium closed its pipe (did it crash?)")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def _note_event(self, message):
        if message.get("method") == "Runtime.consoleAPICalled":
            params = message["params"]
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params["args"])
            self.console.append(text)
        elif message.get("method") == "Runtime.exceptionThrown":
            details = message["params"]["exceptionDetails"]
            self.console.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))
        self.events.append(message)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise ChromiumError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self._note_event(reply)

    def pump(self, seconds):
        """Reads events for a while (console messages)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self._note_event(self._read_message(deadline))
        except ChromiumError as error:
            if "in time" not in str(error):
                raise

    def open(self, url):
        """A new page at `url`; the page opened before is closed (as a reload leaves one page)."""
        if getattr(self, "target", None):
            try:
                self.send("Target.closeTarget", {"targetId": self.target})
            except ChromiumError:
                pass
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.target = target
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        page.send("Runtime.enable")
        page.send("Page.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": self.scale, "mobile": False})
        page.send("Page.navigate", {"url": url})
        return page


class Page:
    def __init__(self, browser, session):
        self.browser, self.session = browser, session

    def send(self, method, params=None, timeout=60):
        return self.browser.send(method, params, session=self.session, timeout=timeout)

    def evaluate(self, expression, timeout=60):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in result:
            raise ChromiumError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=30, poll=0.05):
        """Evaluates `expression` until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise ChromiumError(f"waited {timeout} s for {expression}; console: " +
                                    " | ".join(self.browser.console[-10:]))
            time.sleep(poll)

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))

    def click(self, x, y, button="left"):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params = {"type": kind, "x": x, "y": y}
            if kind != "mouseMoved":
                params.update({"button": button, "clickCount": 1})
            self.send("Input.dispatchMouseEvent", params)
            time.sleep(0.05)

    def move(self, x, y):
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        time.sleep(0.3)

    def tap(self, x, y):
        for kind in ("touchStart", "touchEnd"):
            points = [{"x": x, "y": y}] if kind == "touchStart" else []
            self.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
            time.sleep(0.1)

    def key_down(self, key, code, key_code, modifiers=0):
        self.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": key, "code": code,
                                             "windowsVirtualKeyCode": key_code, "modifiers": modifiers})
        time.sleep(0.08)

    def key_up(self, key, code, key_code, modifiers=0):
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                             "windowsVirtualKeyCode": key_code, "modifiers": modifiers})
        time.sleep(0.08)

    def ctrl(self, letter):
        """Ctrl+letter, as a user presses it: Control down, the letter down and up, Control up."""
        upper = letter.upper()
        self.key_down("Control", "ControlLeft", 17, 2)
        self.key_down(letter, "Key" + upper, ord(upper), 2)
        self.key_up(letter, "Key" + upper, ord(upper), 2)
        self.key_up("Control", "ControlLeft", 17, 0)
