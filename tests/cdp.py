"""A headless Chromium driven over the DevTools protocol through a pipe (`--remote-debugging-pipe`:
commands on fd 3, replies on fd 4, NUL-terminated JSON), with no package beyond the standard
library: one browser for a whole test module, a tab per page, clicks and DOM queries as script.

(No tests here: the browser tests import it.)
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TIMEOUT = 30.0


class BrowserError(RuntimeError):
    pass


class Browser:
    """One Chromium process; `tab()` opens a page in a new target."""

    def __init__(self, chromium: str, profile: Path, flags: Sequence[str]) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: the protocol's two descriptors are 3 and 4, inherited
            commands, replies = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4: pipes hold 3-6
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.process = subprocess.Popen(
            [chromium, *flags, "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=wire, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._ids = itertools.count(1)
        self._buffer = b""
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read(deadline)
            if reply.get("id") == number:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("no reply from the browser")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise BrowserError("the browser closed its pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(text)
        return found

    def tab(self, url: str, *, script: bool = True) -> Tab:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(self, session)
        self.send("Page.enable", {}, session)
        if not script:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session)
        tab.go(url)
        return tab

    def close(self) -> str:
        with contextlib.suppress(BrowserError):
            self.send("Browser.close")
        try:
            _, err = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        return err.decode("utf-8", "replace")


NAVIGATING = ("Inspected target navigated or closed", "Execution context was destroyed",
              "Cannot find context with specified id")
"""How Chromium answers an evaluation in a document that is being replaced."""


class Tab:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session

    def js(self, expression: str) -> Any:
        """The value of `expression` (awaited when it is a promise), as JSON."""
        result = self.browser.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True}, self.session)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def go(self, url: str) -> None:
        """Load `url` and wait until its document has loaded (and the report's script, if any, ran)."""
        self.browser.send("Page.navigate", {"url": url}, self.session)
        self.wait("document.readyState === 'complete' && location.href === " + json.dumps(url))

    def wait(self, condition: str) -> None:
        """Poll `condition` until it holds. While a page is being replaced (a click or a
        navigation loading another document), Chromium may answer an evaluation with
        "Inspected target navigated or closed" or a destroyed context: not yet, ask again."""
        deadline = time.monotonic() + TIMEOUT
        while not self._holds(condition):
            if time.monotonic() > deadline:
                raise BrowserError(f"still not true: {condition}")
            time.sleep(0.02)

    def _holds(self, condition: str) -> bool:
        try:
            return bool(self.js(f"Boolean({condition})"))
        except BrowserError as exc:
            if any(sign in str(exc) for sign in NAVIGATING):
                return False
            raise

    def click(self, selector: str) -> None:
        """Click the first element matching `selector`, as a user would (the default action runs),
        and wait for the fragment or page it opens."""
        before = self.js("location.href")
        found = self.js(f"(function(){{var el=document.querySelector({json.dumps(selector)});"
                        "if(!el)return false;el.click();return true;})()")
        if not found:
            raise BrowserError(f"nothing matches {selector}")
        self.wait(f"location.href !== {json.dumps(before)} && document.readyState === 'complete'")
        self.js("new Promise(function(done){setTimeout(done,0);})")  # the hashchange handler ran
