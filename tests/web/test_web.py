#!/usr/bin/python3
"""The browser build (make web, issue 27) as a student's browser runs it: the page served from a
local web server into headless Chromium (SwiftShader's WebGL 2), driven through the DevTools
protocol (chromium.py), and checked as the desktop GUI tests check the app: the heatmap's cells
at the positions the app's layout reports, against the colours the native CLI's SVG gives the
same weights; a lesson step from the page's address; a click and a tap on a tab; a HiDPI
screen. The engine's numbers built for Node are compared with the native build's within 2 ulp.

    test_web.py --site build-web/site --test page
    test_web.py --node-cli build-web/attnviz-cli.js --cli build/attnviz-cli --test engine

Each --test is one CTest test (tests/CMakeLists.txt); the first frame's time is printed, never
asserted.

Time limits: a page is waited for until the app says it is ready (Module.attnvizReady: started,
and every frame it had to draw drawn; app/platform/browser.cpp), never for a fixed time. A
loaded machine is slow at everything (issue 36: two busy programs made a first frame take 8 s
where it takes under 2), so every wait's limit is what a quiet machine would need, with room to
spare, times how much slower this machine is than a quiet one, as the page measures it: how long
its pages took to be ready against QUIET_READY_S (Pace). Only the first page's start has a fixed
limit, half the CTest limit of a web test.
"""
import argparse
import contextlib
import gzip
import http.server
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium import Chromium  # noqa: E402

failures = []

QUIET_READY_S = 2.0  # a fresh browser's first page ready on a quiet 2-core machine (about 1.5 s)
FIRST_START_LIMIT_S = 90  # the first page's start, before anything is measured


class Pace:
    """How much slower than a quiet machine this one is, from its pages' starts; limit() scales a
    quiet machine's limit by it."""

    def __init__(self):
        self.slowness = 1.0
        self.measured = False

    def page_ready(self, seconds):
        self.slowness = max(self.slowness, seconds / QUIET_READY_S)
        self.measured = True

    def start_limit(self):
        """A page's start: the first one's fixed limit, then 30 s on a quiet machine."""
        return self.limit(30) if self.measured else FIRST_START_LIMIT_S

    def limit(self, quiet_seconds):
        return quiet_seconds * self.slowness


pace = Pace()


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


# --- serving the page --------------------------------------------------------------------------
@contextlib.contextmanager
def serve(site, extra_dir=None):
    """The site folder at http://127.0.0.1:PORT/, and extra_dir's files under /test/."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=site, **kwargs)

        def translate_path(self, path):
            if extra_dir and path.startswith("/test/"):
                return os.path.join(extra_dir, os.path.basename(path.split("?")[0]))
            return super().translate_path(path)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def wait_until_ready(page, also="true"):
    """Waits for the page's app to be ready (Module.attnvizReady: started, and the frames it had
    to draw drawn) and `also`; notes how long the start took. Returns the first frame's time (ms
    from the page's start)."""
    limit = pace.start_limit()
    page.wait_for(f"typeof Module !== 'undefined' && Module.attnvizReady && ({also})", timeout=limit)
    first_frame, ready = page.evaluate("[Module.attnvizFirstFrameMs, Module.attnvizReady]")
    pace.page_ready(ready / 1000)
    print(f"page ready {ready / 1000:.1f} s after its start (first frame at {first_frame / 1000:.1f} s; "
          f"limit {limit:.0f} s); time limits from now on x{pace.slowness:.1f}")
    return first_frame


def open_app(browser, url):
    """Opens the page and waits until the app is ready."""
    page = browser.open(url)
    return page, wait_until_ready(page)


def input_drawn(page, frames_before):
    """Waits until the app has drawn what an input asked for: frames after `frames_before`, the
    last of them leaving nothing more to draw."""
    page.wait_for(f"Module.attnvizFrames > {frames_before} && Module.attnvizSettled", timeout=pace.limit(15))


def frames(page):
    return page.evaluate("Module.attnvizFrames")


def layout(page):
    text = page.evaluate("Module.UTF8ToString(Module._attnviz_layout_json())")
    return json.loads(text)


def click_sentence_field(page, tap=False):
    """A click (or a finger's tap) at the end of the Input panel's sentence field, where the last
    frame drew it (a bar above the panels, the recovery offer's, moves it down)."""
    field = layout(page).get("sentence_field")
    if not check(field is not None, "the sentence field was not drawn"):
        return
    x, y = field["x"] + field["w"] - 6, field["y"] + field["h"] / 2
    if tap:
        page.tap(x, y)
    else:
        page.click(x, y)
    page.wait_for("Module._attnviz_wants_text() !== 0", timeout=pace.limit(15))  # the field is edited


def settle(page, key, expected, timeout=15):
    """The layout once its `key` is `expected`, or as it is after `timeout` seconds on a quiet
    machine (scaled by the pace: a loaded machine draws frames late)."""
    deadline = time.monotonic() + pace.limit(timeout)
    while True:
        frame_layout = layout(page)
        if frame_layout.get(key) == expected or time.monotonic() > deadline:
            return frame_layout
        time.sleep(0.1)


# --- pictures ----------------------------------------------------------------------------------
def decode_png(data):
    """RGB(A) 8-bit PNG -> (height, width, channels) uint8 array (any filter)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour_type in (2, 6) and interlace == 0, "unexpected PNG format"
        elif kind == b"IDAT":
            idat += body
    channels = 4 if colour_type == 6 else 3
    stride = width * channels
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(width, channels), axis=0).reshape(-1)
        elif kind == 2:  # Up
            row = line + previous
        else:  # Average, Paeth: byte by byte
            row = np.zeros(stride, dtype=np.int32)
            up = previous.astype(np.int32)
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                upper_left = up[i - channels] if i >= channels else 0
                if kind == 3:
                    predictor = (left + up[i]) // 2
                else:
                    p = left + up[i] - upper_left
                    pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - upper_left)
                    predictor = left if pa <= pb and pa <= pc else (up[i] if pb <= pc else upper_left)
                row[i] = (line[i] + predictor) & 0xFF
        out[y] = np.asarray(row, dtype=np.int64) & 0xFF
        previous = out[y]
    return out.reshape(height, width, channels)


def screenshot(page):
    import base64
    data = page.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})["data"]
    return decode_png(base64.b64decode(data))


def svg_cell_colours(cli, scenario_args, head):
    """The heatmap cells' colours of the native CLI's SVG: {(query, key): (r, g, b)}."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "heatmap.svg")
        subprocess.run([cli, "svg", *scenario_args, "--head", str(head), "--heatmap", path], check=True)
        with open(path, encoding="utf-8") as svg:
            text = svg.read()
    cells = {}
    for match in re.finditer(r'<rect class="cell"[^>]*fill="#([0-9a-f]{6})"[^>]*data-query="(\d+)" '
                             r'data-key="(\d+)"', text):
        colour, query, key = match.groups()
        cells[(int(query), int(key))] = tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return cells


def check_heatmap(picture, frame_layout, expected, label):
    """Each cell's colour, just inside its top-left corner, is the SVG's for the same weight."""
    heatmap = frame_layout["heatmap"]
    check(heatmap["rows"] * heatmap["cols"] == len(expected),
          f"{label}: the heatmap has {heatmap['rows']}x{heatmap['cols']} cells, the SVG {len(expected)}")
    wrong = 0
    for (query, key), colour in expected.items():
        x = int(heatmap["x"] + heatmap["cell_w"] * key + 5)
        y = int(heatmap["y"] + heatmap["cell_h"] * query + 5)
        seen = tuple(int(v) for v in picture[y, x, :3])
        if max(abs(a - b) for a, b in zip(seen, colour)) > 3:
            wrong += 1
            print(f"  {label}: cell ({query}, {key}) at ({x}, {y}) is {seen}, the SVG's {colour}")
    check(wrong == 0, f"{label}: {wrong} of {len(expected)} cells not the colour of their weight")


# --- the tests ---------------------------------------------------------------------------------
def test_site(args):
    """The folder a teacher copies to a web server, and what a student downloads (gzipped)."""
    names = ["index.html", "index.js", "index.wasm", "index.data"]
    total = 0
    for name in names:
        path = os.path.join(args.site, name)
        if not check(os.path.isfile(path), f"{path} is missing: run make web"):
            continue
        with open(path, "rb") as file:
            data = file.read()
        packed = len(gzip.compress(data, 9))
        total += packed
        print(f"{name}: {len(data) / 1e6:.2f} MB, {packed / 1e6:.2f} MB gzipped")
    print(f"download before any optional font or model: {total / 1e6:.2f} MB gzipped")
    check(total < 3.0e6, f"the download is {total / 1e6:.2f} MB gzipped, more than the 3 MB budget")
    with open(os.path.join(args.site, "index.html"), encoding="utf-8") as page:
        html = page.read()
    check('src="index.js"' in html or "src=\"index.js\"" in html, "index.html does not load index.js")
    check("WebGL 2" in html, "index.html has no message for a browser without WebGL 2")


def test_page(args):
    """The built-in scenario: the first frame, the heatmap's cells, the status bar."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        page, first_frame = open_app(browser, url + "index.html")
        print(f"first frame {first_frame:.0f} ms after the page started loading (headless Chromium, "
              "SwiftShader)")
        frame_layout = layout(page)
        check(frame_layout["width"] == 1280 and frame_layout["height"] == 720,
              f"the canvas is {frame_layout['width']}x{frame_layout['height']} pixels, not the page's 1280x720")
        check(frame_layout["tokens"] == 5, "the built-in sentence is not 5 tokens")
        picture = screenshot(page)
        check_heatmap(picture, frame_layout, svg_cell_colours(args.cli, ["--builtin"], 0), "built-in, head 1")
        # Not a blank frame: the status bar's text is drawn (dark pixels on its light band).
        status = picture[int(frame_layout["status_bar_y"]) + 4:, :400, :3]
        check((status.min(axis=2) < 100).sum() > 200, "the status bar shows no text")
        errors = [line for line in browser.console if "exception" in line or "Aborted" in line]
        check(not errors, f"the console shows errors: {errors}")


def test_scenario(args):
    """A scenario file beside the page (?scenario=...), another head (?head=1), dark theme."""
    scenario = {"format": "attnviz-scenario", "version": 1, "mode": "self",
                "target": "the quick brown fox jumps over the lazy dog",
                "d_model": 16, "heads": 3, "d_k": 4, "d_v": 4, "seed": 5}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "class.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(scenario, file)
        with serve(args.site, folder) as url, Chromium(1280, 720) as browser:
            page, _ = open_app(browser, url + "index.html?scenario=test/class.json&head=1&theme=dark")
            frame_layout = layout(page)
            check(frame_layout["tokens"] == 9, f"the served scenario's sentence is not shown "
                                               f"({frame_layout['tokens']} tokens)")
            check(frame_layout["head"] == 1, "?head=1 did not select head 2")
            check_heatmap(screenshot(page), frame_layout,
                          svg_cell_colours(args.cli, [path, "--theme", "dark"], 1), "served scenario, head 2")
            # A file that is not there: the app opens on the built-in scenario and says why.
            page, _ = open_app(browser, url + "index.html?scenario=test/missing.json")
            check(layout(page)["tokens"] == 5, "with a missing scenario the built-in one is not shown")


def test_lesson(args):
    """A lesson step from the page's address, as a teacher links it."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        page, _ = open_app(browser, url + "index.html?lesson=1&step=2")
        first = layout(page)
        check(first["lesson_step"] == 2, f"?lesson=1&step=2 shows step {first['lesson_step']}")
        lesson_picture = screenshot(page)
        page, _ = open_app(browser, url + "index.html")
        check(layout(page)["lesson_step"] == -1, "without ?lesson a lesson is shown")
        free_picture = screenshot(page)
        differing = (np.abs(lesson_picture.astype(int) - free_picture.astype(int)).max(axis=2) > 30).mean()
        check(differing > 0.05, f"the lesson's page looks like the free one ({differing:.1%} of pixels differ)")


def test_model(args):
    """The shipped models, fetched from beside the page the first time one is needed: by a lesson
    (lesson 11 opens gpt2-kjv-tiny) and by the address (?model=stories260K)."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        with open(os.path.join(args.site, "models", "index.json"), encoding="utf-8") as index:
            models = json.load(index)
        check(sorted(models) == ["bert-web", "gpt2-kjv-tiny", "gpt2-kjv-tiny-shuffled", "gpt2-web",
                                 "induction-tiny", "marian-web-es", "stories260K"],
              f"models/index.json lists {sorted(models)}")
        # Lesson 11's third step shows every head of the model (its first is a question).
        page, _ = open_app(browser, url + "index.html?lesson=11&step=2")
        frame_layout = settle(page, "model", "gpt2-kjv-tiny", timeout=60)
        check(frame_layout["model"] == "gpt2-kjv-tiny", f"lesson 11 shows the model {frame_layout['model']!r}")
        grid = frame_layout.get("model_grid", {})
        check(grid.get("layers") == 2 and grid.get("heads") == 4,
              f"the Model view's grid is {grid.get('layers')} layers x {grid.get('heads')} heads, not 2 x 4")
        check(any("downloading the model gpt2-kjv-tiny" in line for line in browser.console),
              "the model was not downloaded when the lesson needed it")
        check(not any("stories260K" in line for line in browser.console),
              "a model no one asked for was downloaded")
        page, _ = open_app(browser, url + "index.html?model=stories260K")
        check(layout(page)["model"] == "stories260K", "?model=stories260K did not open it")
        # A translation model: SentencePiece, compiled from Debian's source package, reads its
        # text in the browser too, and the page opens on its cross-attention's three grids.
        page, _ = open_app(browser, url + "index.html?model=marian-web-es&view=model")
        frame_layout = settle(page, "model", "marian-web-es", timeout=60)
        check(frame_layout["model"] == "marian-web-es", "?model=marian-web-es did not open it")
        check(not frame_layout.get("errors"), f"marian-web-es: {frame_layout.get('errors')}")


def test_fonts(args):
    """The fallback fonts, fetched the first time a sentence needs them: Chinese characters and
    an emoji drawn from their glyphs, not the missing-glyph box; a Latin sentence fetches none."""
    scenario = {"format": "attnviz-scenario", "version": 1, "mode": "self",
                "target": "\u6211 \u7231 \u732b \U0001F600", "d_model": 8, "heads": 2, "d_k": 4, "d_v": 4}
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "cjk.json"), "w", encoding="utf-8") as file:
            json.dump(scenario, file, ensure_ascii=False)
        with serve(args.site, folder) as url, Chromium(1280, 720) as browser:
            page, _ = open_app(browser, url + "index.html")
            check(layout(page)["missing_glyphs"] == 0, "the built-in sentence lacks glyphs")
            check(not any("downloading the font" in line for line in browser.console),
                  "a font was downloaded for a Latin sentence")
            page, _ = open_app(browser, url + "index.html?scenario=test/cjk.json")
            page.wait_for("Module.attnvizFontsArrived >= 2", timeout=pace.limit(60))
            frame_layout = settle(page, "missing_glyphs", 0)
            check(frame_layout["tokens"] == 4, f"the Chinese sentence is {frame_layout['tokens']} tokens, not 4")
            check(frame_layout["missing_glyphs"] == 0,
                  f"{frame_layout['missing_glyphs']} characters still drawn as the missing-glyph box")
            for font in ("DroidSansFallbackFull.ttf", "Symbola_hint.ttf"):
                check(any("downloading the font " + font in line for line in browser.console),
                      f"{font} was not downloaded")


def test_clipboard(args):
    """Ctrl+C in the sentence field copies to the system's clipboard; a paste into the page
    (Ctrl+V) gives the field the text pasted."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        browser.send("Browser.grantPermissions", {"origin": url.rstrip("/"),
                                                  "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
        page, _ = open_app(browser, url + "index.html")
        click_sentence_field(page)
        page.ctrl("a")
        page.ctrl("c")
        page.wait_for("Module.attnvizClipboard === 'i like to eat apple'", timeout=pace.limit(15))
        check(page.evaluate("Module.attnvizClipboard") == "i like to eat apple",
              f"Ctrl+C copied {page.evaluate('Module.attnvizClipboard')!r}")
        system = page.evaluate("navigator.clipboard.readText().catch((e) => 'refused: ' + e)")
        check(system == "i like to eat apple", f"the system's clipboard holds {system!r}")
        # Another program copies a text; Ctrl+V in the field pastes it (the browser's paste event).
        page.evaluate("navigator.clipboard.writeText('the cat sat')")
        page.ctrl("a")
        page.ctrl("v")
        tokens = settle(page, "tokens", 3)["tokens"]
        check(tokens == 3, f"after pasting 'the cat sat' the sentence is {tokens} tokens")


def test_bench(args):
    """A weight edited every frame, as a drag does, on 64 tokens and 8 heads (?bench-frames, the
    desktop's --bench-frames): every frame is built and drawn. The times are printed, never
    asserted (docs/performance.md)."""
    scenario = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "scenarios")
    with serve(args.site, scenario) as url, Chromium(1280, 720) as browser:
        browser.open(url + "index.html?bench-frames=60&scenario=test/n64-h8.json")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any("attnviz: bench:" in line for line in browser.console):
            browser.pump(0.5)
        report = [line for line in browser.console if "attnviz: bench:" in line or "p50_ms" in line]
        for line in report:
            print(line)
        check(any("64 queries x 64 keys, 8 heads" in line for line in report),
              "the benchmark did not run on 64 tokens and 8 heads: " + " | ".join(browser.console[-5:]))


def test_offline(args):
    """Once opened, the page opens again with the network gone (its service worker, sw.js), a
    lesson's model too once it has been fetched."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        page, _ = open_app(browser, url + "index.html?lesson=11")
        page.wait_for("navigator.serviceWorker.controller !== null || "
                      "navigator.serviceWorker.ready.then(() => navigator.serviceWorker.controller !== null)",
                      timeout=pace.limit(30))
        page.wait_for("JSON.parse(Module.UTF8ToString(Module._attnviz_layout_json())).model !== ''",
                      timeout=pace.limit(60))
        page.wait_for("caches.keys().then(async (names) => { for (const name of names) if (await (await "
                      "caches.open(name)).match('models/gpt2-kjv-tiny/model.safetensors')) return true; "
                      "return false; })", timeout=pace.limit(30))  # the model's files in the cache
        page.send("Network.enable")
        page.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
                                                       "downloadThroughput": -1, "uploadThroughput": -1})
        page.send("Page.navigate", {"url": url + "index.html?lesson=11&step=1"})
        wait_until_ready(page, also="location.search.includes('step=1')")
        page.wait_for("JSON.parse(Module.UTF8ToString(Module._attnviz_layout_json())).model !== ''",
                      timeout=pace.limit(30))
        offline = layout(page)
        check(offline["lesson_step"] == 1 and offline["model"] == "gpt2-kjv-tiny",
              f"offline, lesson 11 step 2 shows step {offline['lesson_step']} with {offline['model']!r}")


def test_typing(args):
    """Typing as a tablet types: a finger's tap on the sentence field gives the page's hidden text
    box the keyboard within the tap (where iOS opens its on-screen keyboard), text inserted into
    it (as an on-screen keyboard or an input method inserts it) reaches the field, its Backspace
    takes a character back; leaving the field gives the keyboard back."""
    with serve(args.site) as url, Chromium(1280, 720, extra_args=["--touch-events=enabled"]) as browser:
        page, _ = open_app(browser, url + "index.html")
        click_sentence_field(page, tap=True)
        check(page.evaluate("document.activeElement.id") == "keyboard",
              f"after a tap on the sentence field the focus is on {page.evaluate('document.activeElement.id')!r}")
        page.send("Input.insertText", {"text": " pie"})
        tokens = settle(page, "tokens", 6)["tokens"]
        check(tokens == 6, f"after ' pie' was typed the sentence is {tokens} tokens")
        page.send("Input.insertText", {"text": "\u4f60"})  # a character an input method gives
        tokens = settle(page, "tokens", 7)["tokens"]
        check(tokens == 7, f"after a Chinese character (a token of its own) the sentence is {tokens} tokens, not 7")
        # An on-screen keyboard's Backspace, five times ("你", "pie", " "): a key it cannot name,
        # then the text box's deletion; tapped in a burst, as fast as a finger repeats it, without
        # waiting for the frames each one causes (a Backspace that came while the frame showing
        # the last one was drawn was lost: app/platform/backend.cpp holds it for the next frame).
        for _ in range(5):
            page.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Unidentified",
                                                 "windowsVirtualKeyCode": 229})
            page.evaluate("(() => { const box = document.getElementById('keyboard');"
                          " box.value = ''; box.dispatchEvent(new InputEvent('input',"
                          " {inputType: 'deleteContentBackward', bubbles: true})); })()")
            page.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Unidentified", "windowsVirtualKeyCode": 229})
        sentence = settle(page, "sentence", "i like to eat apple")["sentence"]
        check(sentence == "i like to eat apple", f"after five Backspaces the sentence is {sentence!r}")
        page.tap(700, 400)  # the heatmap: the field is left
        page.wait_for("document.activeElement.id !== 'keyboard'", timeout=pace.limit(15))
        check(page.evaluate("document.activeElement.id") != "keyboard", "the text box kept the keyboard")


def test_resize(args):
    """The canvas follows the page: a smaller window, one the size of the screen (the page in the
    browser's full screen: GLFW would ask for full screen again every frame), a larger one; and
    F11 puts the page in full screen."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        page, _ = open_app(browser, url + "index.html")
        screen = page.evaluate("[screen.width, screen.height]")
        for width, height in ((1024, 640), tuple(screen), (1100, 700)):
            page.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                             "deviceScaleFactor": 1, "mobile": False})
            frame_layout = settle(page, "width", width)
            frame_layout = settle(page, "height", height)
            check((frame_layout["width"], frame_layout["height"]) == (width, height),
                  f"in a {width}x{height} page the canvas is {frame_layout['width']}x{frame_layout['height']}")
        errors = [line for line in browser.console if "Permissions check failed" in line or "exception" in line]
        check(not errors, f"resizing wrote errors: {errors[:3]}")
        page.key_down("F11", "F11", 122)
        page.key_up("F11", "F11", 122)
        check(settle(page, "fullscreen", True)["fullscreen"], "the app does not know the page is in full screen")
        check(page.evaluate("document.fullscreenElement !== null"), "F11 did not put the page in full screen")


def test_keys(args):
    """The app's shortcuts are kept from the browser (F5 would reload the page, Ctrl+S save it,
    Ctrl+= zoom it); copy and paste's are left to it."""
    with serve(args.site) as url, Chromium(1280, 720) as browser:
        page, _ = open_app(browser, url + "index.html")
        for key, ctrl, kept in (("F5", False, True), ("F1", False, True), ("F11", False, True),
                                ("s", True, True), ("o", True, True), ("=", True, True), ("-", True, True),
                                ("0", True, True), ("k", True, True), ("c", True, False), ("v", True, False),
                                ("a", True, False), ("x", True, False), ("F12", False, False)):
            prevented = page.evaluate(f"(() => {{ const event = new KeyboardEvent('keydown', {{key: '{key}', "
                                      f"ctrlKey: {str(ctrl).lower()}, cancelable: true, bubbles: true}}); "
                                      "Module.canvas.dispatchEvent(event); return event.defaultPrevented; })()")
            name = ("Ctrl+" if ctrl else "") + key
            check(prevented == kept, f"{name}: the browser's own action is {'kept from' if prevented else 'left to'} it")


def test_messages(args):
    """Where the app cannot run, the page says why and what to do: opened from a folder
    (file://, where browsers load no WebAssembly), and in a browser without WebGL 2."""
    shown = "((document.getElementById('message') || {}).textContent || '')"
    with Chromium(1280, 720) as browser:
        page = browser.open("file://" + os.path.abspath(os.path.join(args.site, "index.html")))
        text = page.wait_for(f"{shown}.includes('web server') && {shown}", timeout=pace.start_limit())
        check("python3 -m http.server" in text, f"opened from a folder, the page says: {text!r}")
    with serve(args.site) as url, Chromium(1280, 720, extra_args=["--disable-3d-apis"]) as browser:
        page = browser.open(url + "index.html")
        text = page.wait_for(f"{shown}.includes('WebGL') && {shown}", timeout=pace.start_limit())
        check("needs WebGL 2" in text, f"without WebGL the page says: {text!r}")
        time.sleep(1)
        check(page.evaluate(shown) == text, "the WebGL message was replaced by " + repr(page.evaluate(shown)))


def wait_for_event(browser, method, timeout=20):
    deadline = time.monotonic() + pace.limit(timeout)
    while time.monotonic() < deadline:
        for event in browser.events:
            if event.get("method") == method:
                browser.events.remove(event)
                return event["params"]
        browser.pump(0.2)
    return None


def type_text(page, text):
    for character in text:
        page.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": character, "text": character})
        page.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": character})
        time.sleep(0.03)


def test_files(args):
    """Files as a student has them: File ▸ Open through the browser's file picker, a lesson file
    dropped on the page, File ▸ Save as a download that opens again, Open recent and unsaved work
    still there after a reload (the browser's storage)."""
    scenario = {"format": "attnviz-scenario", "version": 1, "mode": "self",
                "target": "my own scenario from the disk", "d_model": 8, "heads": 2, "d_k": 4, "d_v": 4}
    with tempfile.TemporaryDirectory() as folder:
        scenario_path = os.path.join(folder, "week3.json")
        with open(scenario_path, "w", encoding="utf-8") as file:
            json.dump(scenario, file)
        downloads = os.path.join(folder, "downloads")
        os.mkdir(downloads)
        with serve(args.site) as url, Chromium(1280, 720) as browser:
            browser.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads,
                                                         "eventsEnabled": True})
            page, _ = open_app(browser, url + "index.html")
            # Ctrl+O: the browser's file picker, answered with a file from the disk.
            page.send("Page.setInterceptFileChooserDialog", {"enabled": True})
            page.ctrl("o")
            chooser = wait_for_event(browser, "Page.fileChooserOpened")
            if check(chooser is not None, "Ctrl+O opened no file picker"):
                page.send("DOM.setFileInputFiles", {"files": [scenario_path], "backendNodeId": chooser["backendNodeId"]})
                page.wait_for("JSON.parse(Module.UTF8ToString(Module._attnviz_layout_json()))"
                              ".document.endsWith('week3.json')", timeout=pace.limit(20))
                opened = layout(page)
                check(opened["document"].endswith("/files/week3.json"),
                      f"the opened file is kept as {opened['document']!r}, not in the browser's files/")
                check(opened["tokens"] == 6, f"the opened scenario shows {opened['tokens']} tokens, not 6")
            # A lesson file dropped on the page starts the lesson.
            with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                   "assets", "lessons", "01-retrieval.json"), encoding="utf-8") as lesson:
                lesson_text = lesson.read()
            page.evaluate("(() => { const data = new DataTransfer(); data.items.add(new File([" +
                          json.dumps(lesson_text) + "], 'lesson.json', {type: 'application/json'}));"
                          "Module.canvas.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true,"
                          " cancelable: true})); })()")
            page.wait_for("JSON.parse(Module.UTF8ToString(Module._attnviz_layout_json())).lesson_step === 0",
                          timeout=pace.limit(20))
            # Back to the scenario: File ▸ Open recent lists it (the page's storage written, as it is
            # every 2 s); Ctrl+S downloads it.
            page.evaluate("new Promise((done) => FS.syncfs(false, done)).then(() => true)")
            page, _ = open_app(browser, url + "index.html")
            recent = layout(page)["recent_files"]
            check(any(path.endswith("/files/week3.json") for path in recent),
                  f"after a reload Open recent lists {recent}")
            click_sentence_field(page)
            page.ctrl("a")
            type_text(page, "a sentence of my own")
            sentence = settle(page, "sentence", "a sentence of my own", timeout=20)["sentence"]  # every letter drawn
            check(sentence == "a sentence of my own", f"typed into the field, the sentence is {sentence!r}")
            page.key_down("Escape", "Escape", 27)
            page.key_up("Escape", "Escape", 27)
            page.wait_for("Module._attnviz_wants_text() === 0", timeout=pace.limit(15))  # the field left
            page.ctrl("s")
            deadline = time.monotonic() + pace.limit(20)
            saved = []
            while time.monotonic() < deadline and not saved:
                saved = [name for name in os.listdir(downloads) if name.endswith(".json")]
                time.sleep(0.2)
            if check(saved, "Ctrl+S downloaded nothing (the page shows " +
                     json.dumps({key: layout(page).get(key) for key in ("document", "sentence", "unsaved")}) +
                     "; console: " + " | ".join(browser.console[-5:]) + ")"):
                path = os.path.join(downloads, saved[0])
                result = subprocess.run([args.cli, "compute", path], capture_output=True, text=True)
                check(result.returncode == 0, f"the downloaded {saved[0]} does not open: {result.stderr}")
                with open(path, encoding="utf-8") as file:
                    text = file.read()
                    check("a sentence of my own" in text, f"{saved[0]} does not hold the sentence typed: "
                                                          f"{json.loads(text).get('target')!r}")
            # File > Export > Every matrix as CSV: one ZIP of the folder's files (the menu at the
            # positions it has at 1280x720, as the desktop tests click it).
            before = frames(page)
            page.click(25, 11)
            for x, y in ((40, 147), (200, 147), (340, 147), (400, 280)):
                input_drawn(page, before)  # the menu the last move opened is drawn
                before = frames(page)
                page.move(x, y)
            input_drawn(page, before)
            page.click(400, 280)
            deadline = time.monotonic() + pace.limit(20)
            archives = []
            while time.monotonic() < deadline and not archives:
                archives = [name for name in os.listdir(downloads) if name.endswith(".zip")]
                time.sleep(0.2)
            if check(archives == ["attnviz-matrices.zip"], f"the CSV export downloaded {os.listdir(downloads)}"):
                import zipfile
                time.sleep(0.5)
                with zipfile.ZipFile(os.path.join(downloads, archives[0])) as archive:
                    check(archive.testzip() is None, "the ZIP's files do not match their CRCs")
                    names = archive.namelist()
                    written = page.evaluate("FS.readdir('/downloads/attnviz-matrices').length - 2")
                    check(len(names) == written and all(name.endswith(".csv") for name in names),
                          f"the ZIP holds {len(names)} files, the export wrote {written}")
                    first = archive.read(sorted(names)[0]).decode()
                    check("," in first and len(first.splitlines()) > 1, "the ZIP's first CSV is not a table")
            # Unsaved work is offered back after a reload.
            click_sentence_field(page)
            type_text(page, " and more")
            sentence = settle(page, "sentence", "a sentence of my own and more", timeout=20)["sentence"]
            check(sentence == "a sentence of my own and more", f"typed into the field, the sentence is {sentence!r}")
            # The autosave (within 2 s), then the page's storage (every 2 s; here at once).
            page.wait_for("FS.analyzePath('/state/recovery.json').exists", timeout=pace.limit(20))
            page.evaluate("new Promise((done) => FS.syncfs(false, done)).then(() => true)")
            page, _ = open_app(browser, url + "index.html")
            check(layout(page)["recovery_offered"], "after a reload the unsaved work is not offered back")
            # The page writes its storage by itself, every 2 s: a write that began after the file
            # was (Module.attnvizStateSavedAsOf, index.html).
            written = page.evaluate("(() => { FS.writeFile('/state/probe.txt', 'kept'); return performance.now(); })()")
            page.wait_for(f"Module.attnvizStateSavedAsOf > {written}", timeout=pace.limit(10))
            page, _ = open_app(browser, url + "index.html")
            check(page.evaluate("FS.analyzePath('/state/probe.txt').exists"),
                  "a file written into the state folder was not kept by the page's own saving")


def click_tab(page, frame_layout, view, tap=False):
    tabs = {tab["view"]: tab for tab in frame_layout["tabs"]}
    if not check(view in tabs, f"no {view} tab was drawn (tabs: {sorted(tabs)})"):
        return None
    tab = tabs[view]
    x, y = tab["x"] + tab["w"] / 2, tab["y"] + tab["h"] / 2
    if tap:
        page.tap(x, y)
    else:
        page.click(x, y)
    return settle(page, "centre_view", view)


def test_click(args):
    """A click on the Pipeline tab, and a finger's tap on the Geometry tab, change the view."""
    with serve(args.site) as url, Chromium(1280, 720, extra_args=["--touch-events=enabled"]) as browser:
        page, _ = open_app(browser, url + "index.html")
        before = layout(page)
        check(before["centre_view"] == "heatmaps", f"the app opens on {before['centre_view']}")
        after = click_tab(page, before, "pipeline")
        if after:
            check(after["centre_view"] == "pipeline", f"a click on Pipeline shows {after['centre_view']}")
            check(len(after["pipeline_titles"]) > 0, "the Pipeline view drew no tiles")
            tapped = click_tab(page, after, "geometry", tap=True)
            if tapped:
                check(tapped["centre_view"] == "geometry", f"a tap on Geometry shows {tapped['centre_view']}")


def wait_for_value(page, part, key, done, timeout=40):
    """The layout once `done(layout[part][key])` holds, or as it is after `timeout` seconds (paced);
    None when the value was never drawn."""
    deadline = time.monotonic() + pace.limit(timeout)
    while True:
        frame_layout = layout(page)
        value = frame_layout.get(part, {}).get(key)
        if (value is not None and done(value)) or time.monotonic() > deadline:
            return frame_layout
        time.sleep(0.2)


def click_value(page, frame_layout, part, button):
    """A click at the centre of a button the panel recorded (`part`.`button`_x, _y)."""
    values = frame_layout.get(part, {})
    if not check(f"{button}_x" in values, f"{part}.{button} was not drawn"):
        return False
    page.click(values[f"{button}_x"], values[f"{button}_y"])
    return True


def test_train(args):
    """The Training view trains in the browser, on the page's one thread: gradient descent moves
    the one-layer scenario's W_Q and W_K until each word looks at the word before, and a new model
    takes training steps (TrainingSession::pump) while the page keeps drawing."""
    scenario = {"format": "attnviz-scenario", "version": 1, "mode": "self",
                "target": "the cat sat on the mat", "d_model": 8, "heads": 2, "d_k": 4, "d_v": 4,
                "positional": "sinusoidal", "seed": 5}
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "cat.json"), "w", encoding="utf-8") as file:
            json.dump(scenario, file)
        with serve(args.site, folder) as url, Chromium(1280, 720) as browser:
            page, _ = open_app(browser, url + "index.html?scenario=test/cat.json&view=train&presenter")
            before = layout(page)
            check(before.get("centre_view") == "train", f"?view=train shows {before.get('centre_view')}")
            fit = before.get("fit", {})
            check(fit.get("steps") == 0 and fit.get("mismatch", 0) > 0.5,
                  f"before Start the head is not yet the target: {fit}")
            if not click_value(page, before, "fit", "start"):
                return
            after = wait_for_value(page, "fit", "mismatch", lambda value: value <= 0.1)
            fit = after.get("fit", {})
            print(f"gradient descent: {fit.get('steps')} steps, loss {fit.get('loss')}, "
                  f"mismatch {fit.get('mismatch')}")
            check(fit.get("mismatch", 1) <= 0.1 and fit.get("steps", 0) > 5,
                  f"gradient descent did not reach the target in the browser: {fit}")
            # A new model, trained step after step between frames.
            if not click_value(page, after, "train", "kind_model"):
                return
            model_mode = wait_for_value(page, "train", "start_x", lambda value: True, timeout=15)
            if not click_value(page, model_mode, "train", "start"):
                return
            frames_before = frames(page)
            trained = wait_for_value(page, "train", "steps_taken", lambda value: value >= 30, timeout=60)
            steps = trained.get("train", {}).get("steps_taken", 0)
            drawn = frames(page) - frames_before
            print(f"a new model: {steps} steps while the page drew {drawn} frames, "
                  f"loss {trained.get('train', {}).get('last_loss')}")
            check(steps >= 30, f"the new model took {steps} training steps in the browser")
            check(drawn >= 10, f"the page drew {drawn} frames while it trained")


def test_hidpi(args):
    """A screen of two pixels per CSS pixel: twice the canvas pixels, the same layout, sharp."""
    with serve(args.site) as url, Chromium(1280, 720, scale=2) as browser:
        page, _ = open_app(browser, url + "index.html")
        frame_layout = layout(page)
        check(frame_layout["width"] == 2560 and frame_layout["height"] == 1440,
              f"at devicePixelRatio 2 the canvas is {frame_layout['width']}x{frame_layout['height']}")
        check(frame_layout["text_size"] == 16, f"the text size is {frame_layout['text_size']}, not 16 as at 1x")
        picture = screenshot(page)
        check(picture.shape[:2] == (1440, 2560), f"the screenshot is {picture.shape[1]}x{picture.shape[0]}")
        check_heatmap(picture, frame_layout, svg_cell_colours(args.cli, ["--builtin"], 0), "HiDPI")


def ulp(value):
    """The spacing of float32 numbers at `value`."""
    value = np.float32(abs(value))
    return float(np.spacing(value)) if value > 0 else float(np.finfo(np.float32).smallest_subnormal)


def leaves(value, path=""):
    """Every number of a JSON value with its path, and each list of numbers (a row) whole."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def scale_of(path):
    """The matrix (or vector) the number at `path` belongs to: its path without the indices."""
    return re.sub(r"(\[\d+\])+$", "", path)


def compare_numbers(native, web, label):
    """Every number within 2 ulp of the largest magnitude of its matrix (a sum of products loses
    its last bits where terms cancel: 0.0046 from terms of 0.5 is compared in 0.5's ulps), and
    everything else equal. A difference of two computations (a "difference" key) is compared
    in absolute terms (within 1e-6). Returns the worst case."""
    native_leaves, web_leaves = list(leaves(native)), list(leaves(web))
    if not check([p for p, _ in native_leaves] == [p for p, _ in web_leaves], f"{label}: the JSON differs in shape"):
        return 0.0, 0.0, ""
    scales = {}
    for path, value in native_leaves:
        if isinstance(value, float):
            matrix = scale_of(path)
            scales[matrix] = max(scales.get(matrix, 0.0), abs(value))
    worst = (0.0, 0.0, "")  # ulps, the same as a share of the matrix's largest value, where
    for (path, a), (_, b) in zip(native_leaves, web_leaves):
        if isinstance(a, float) or isinstance(b, float):
            if a is None or b is None or isinstance(a, str) or isinstance(b, str):
                check(a == b, f"{label}: {path} is {a!r} natively, {b!r} in Node")
                continue
            if "difference" in path:
                check(abs(a - b) <= 1e-6, f"{label}: {path} is {a!r} natively, {b!r} in Node")
                continue
            scale = scales[scale_of(path)]
            ulps = abs(a - b) / ulp(scale)
            if ulps > worst[0]:
                worst = (ulps, abs(a - b) / scale if scale > 0 else 0.0, f"{path} ({a!r} against {b!r})")
        else:
            check(a == b, f"{label}: {path} is {a!r} natively, {b!r} in Node")
    return worst


def test_engine(args):
    """attnviz-cli built for Node against this native build's (the one users run, -march=native
    with its AVX-512 and FMA where the CPU has them; OpenBLAS for a model's products where it is
    installed). The one-layer engine: every number within 2 ulp of its matrix's largest value.
    A real model's layers add their rounding up (LayerNorm, GELU, exp from another maths
    library, products summed in another order): every intermediate of every layer within 1e-4 of
    its matrix's largest value, as the PyTorch oracle holds the native engine (tests/oracle/),
    the largest difference printed."""
    runs = [["compute", "--builtin"],
            ["compute", "--text", "the animal did not cross the street because it was tired"],
            ["compute", "--mode", "cross", "--text", "the cat sat", "--source", "le chat est assis"],
            ["compute", "--builtin", "--variant", "flash", "--head", "1"],
            ["model", "attention", "gpt2-kjv-tiny", "--text", "In the beginning God created"],
            ["model", "attention", "stories260K", "--text", "Once upon a time"],
            ["model", "attention", "marian-web-es", "--source", "God gives eternal life."]]
    # SentencePiece compiled from Debian's source package (third_party/web/web.cmake) against
    # Debian's libsentencepiece: a translation model's pieces, line for line.
    for side in ([], ["--target"]):
        for text in ["The teacher asked the students to open their books.",
                     "El perro negro corrió a la casa.", "café naïve Ωmega", "God 🙂 said 光",
                     "  two   spaces  ", "e\u0301 combining, ﬁ ligature, ＡＢＣ", ""]:
            run = ["model", "tokens", "marian-web-es", "--text", text, *side]
            native = subprocess.run([args.cli, *run], capture_output=True, text=True)
            web = subprocess.run(["node", args.node_cli, *run], capture_output=True, text=True)
            check(native.returncode == web.returncode and native.stdout == web.stdout,
                  f"{' '.join(run)!r}: the browser build's pieces differ from the native build's: "
                  f"{web.stdout[-300:]!r} {web.stderr[-300:]!r} against {native.stdout[-300:]!r}")
    print("marian-web-es: the browser build's SentencePiece pieces equal the native build's on "
          "14 texts (source and target)")
    for run in runs:
        model = run[0] == "model"
        native = subprocess.run([args.cli, *run], capture_output=True, text=True)
        web = subprocess.run(["node", args.node_cli, *run], capture_output=True, text=True)
        label = " ".join(run)
        if not check(native.returncode == 0 and web.returncode == 0,
                     f"{label}: exit {native.returncode} (native), {web.returncode} (Node): {web.stderr[-500:]}"):
            continue
        ulps, relative, where = compare_numbers(json.loads(native.stdout), json.loads(web.stdout), label)
        print(f"{label}: largest difference {ulps:.2f} ulp of its matrix's largest value (about "
              f"{relative:.1e} of it)" + (f", at {where}" if ulps else ""))
        if model:
            check(relative <= 1e-4, f"{label}: {relative:.2g} of the matrix's largest value apart at {where}")
        else:
            check(ulps <= 2, f"{label}: {ulps:.2f} ulp apart at {where}")


TESTS = {"site": test_site, "page": test_page, "scenario": test_scenario, "lesson": test_lesson,
         "model": test_model, "fonts": test_fonts, "clipboard": test_clipboard, "bench": test_bench,
         "offline": test_offline, "messages": test_messages, "files": test_files,
         "resize": test_resize, "keys": test_keys, "typing": test_typing,
         "click": test_click, "hidpi": test_hidpi, "engine": test_engine, "train": test_train}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", help="the browser build's site folder (build-web/site)")
    parser.add_argument("--cli", help="the native attnviz-cli")
    parser.add_argument("--node-cli", help="attnviz-cli built for Node (build-web/attnviz-cli.js)")
    parser.add_argument("--test", choices=sorted(TESTS), required=True)
    args = parser.parse_args()
    if args.site and not os.path.isfile(os.path.join(args.site, "index.html")):
        print(f"{args.site}/index.html not found: build the browser build first (make web)")
        return 1
    TESTS[args.test](args)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
