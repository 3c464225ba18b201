#!/usr/bin/python3
"""A screenshot of the browser build's page in headless Chromium, once the app has drawn (and a
model a lesson needs has arrived): docs/make-screenshots.sh's pictures of the browser build.

    page_screenshot.py --site build-web/site --out shot.png [--options "lesson=3&step=1"]
                       [--size 1280x720] [--scale 1]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium import Chromium  # noqa: E402
from test_web import layout, open_app, serve  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--options", default="", help="the page's address options, as after '?'")
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    with serve(args.site) as url, Chromium(width, height, scale=args.scale) as browser:
        page, first_frame = open_app(browser, url + "index.html" + ("?" + args.options if args.options else ""))
        time.sleep(2.0)  # a model a lesson needs, fetched and computed
        page.screenshot(args.out)
        print(f"{args.out}: first frame after {first_frame:.0f} ms; {layout(page)['centre_view']} view")


if __name__ == "__main__":
    main()
