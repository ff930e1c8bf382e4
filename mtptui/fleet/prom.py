"""PromQL instant queries over Prometheus' HTTP API (`/api/v1/query`), standard library only.

Every failure a user can cause (a URL that is not one, a server that does not answer or is not
Prometheus, a selector it refuses) is a `PromError` with one line to show."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import NamedTuple

from mtptui.errors import UserError
from mtptui.files import MIB, size_text
from mtptui.printable import printable


IN_FLIGHT = 4  # queries asked at a time (see Prometheus.queries)
ANSWER_LIMIT = 64 * MIB  # one query's answer (1,000 hosts: about 9 MB for all of a refresh's)


class PromError(UserError):
    """Prometheus could not be asked, or did not answer: one line for the user. `bad_query` is
    True when Prometheus refused the query itself (HTTP 400, `bad_data`)."""

    def __init__(self, message: str, *, bad_query: bool = False) -> None:
        super().__init__(message)
        self.bad_query = bad_query

    def __reduce__(self):  # from the fleet's reader process, bad_query kept
        return _prom_error, (str(self), self.bad_query)


def _prom_error(message: str, bad_query: bool) -> PromError:
    return PromError(message, bad_query=bad_query)


class Sample(NamedTuple):  # a tuple: a refresh makes tens of thousands
    labels: dict[str, str]
    value: float


def check_url(url: str) -> str:
    """The base URL without a trailing slash. Raises PromError for what is not an http(s) URL."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # 'http://[::1': an address not closed
        raise PromError(f"{url!r}: not a Prometheus URL (give http://HOST:9090)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PromError(f"{url!r}: not a Prometheus URL (give http://HOST:9090)")
    try:
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        raise PromError(f"{url!r}: bad port") from None
    return url.rstrip("/")


class Prometheus:
    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        self.url = check_url(url)
        self.timeout = timeout

    def query(self, promql: str) -> list[Sample]:
        """An instant query that yields a vector. NaN, infinite and near-infinite samples are left out:
        no figure."""
        return self.read(promql, self.fetch(promql))

    def queries(self, promqls: dict[str, str]) -> dict[str, list[Sample]]:
        """Several instant queries, by key, IN_FLIGHT at a time in their order; each answer read in
        this thread as it comes, while Prometheus works on the next ones. (All at once, Prometheus
        shares its cores among them and answers them all late, and the reading waits for the
        last; read in as many threads, the JSON of 1,000 hosts kept a screen's loop waiting for the
        interpreter 100 ms and more.)"""
        failed: list[PromError] = []  # the first failure: then no more asking (each would wait its timeout)
        # One instant for all: answers from one moment (a target that went down between two
        # queries would be down in one and still have its last samples in the other).
        at = time.time()

        def ask(promql: str) -> bytes:
            if failed:
                raise failed[0]
            try:
                return self.fetch(promql, at)
            except PromError as e:
                failed.append(e)
                raise

        pool = ThreadPoolExecutor(min(IN_FLIGHT, len(promqls)) or 1)
        asked = {pool.submit(ask, q): k for k, q in promqls.items()}
        try:
            got = {asked[f]: self.read(promqls[asked[f]], f.result()) for f in as_completed(asked)}
        except PromError as e:
            failed.append(e)
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return {k: got[k] for k in promqls}

    def fetch(self, promql: str, at: float | None = None) -> bytes:
        """The raw answer to an instant query, evaluated at `at` (epoch seconds; None: now)."""
        body = urllib.parse.urlencode({"query": promql, **({} if at is None else {"time": f"{at:.3f}"})}).encode()
        req = urllib.request.Request(f"{self.url}/api/v1/query", data=body,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                raw = r.read(ANSWER_LIMIT + 1)
        except urllib.error.HTTPError as e:
            raise PromError(self._refused(e), bad_query=e.code == 400) from None
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, socket.timeout):
                reason = f"no answer in {self.timeout:g} s"
            raise PromError(f"cannot reach Prometheus at {self.url}: {getattr(reason, 'strerror', None) or reason}") from None
        if len(raw) > ANSWER_LIMIT:
            raise PromError(f"{self.url}: an answer over {size_text(ANSWER_LIMIT)} (narrow it with --match)")
        return raw

    def read(self, promql: str, raw: bytes) -> list[Sample]:
        """The samples of a raw answer (see query)."""
        try:
            doc = json.loads(raw)
            data = doc["data"]
            if data["resultType"] != "vector":
                raise PromError(f"{promql}: Prometheus answered a {data['resultType']}, not a vector")
            result = data["result"]
            if not isinstance(result, list):
                raise TypeError(result)
            # NaN, the infinities and numbers near them (1.7e308 twice is an infinite mean) are no figure
            samples = [Sample(s["metric"], v) for s in result if -1e290 < (v := float(s["value"][1])) < 1e290]
            for s in samples:  # labels are read as text everywhere after this
                if type(s.labels) is not dict or not all(type(x) is str for x in s.labels.values()):
                    raise TypeError(s.labels)
            if b"\\u" in raw or not raw.isascii():  # a label may hold what a terminal acts on
                samples = [Sample({k: printable(x) for k, x in s.labels.items()}, s.value) for s in samples]
            return samples
        except (ValueError, KeyError, TypeError, IndexError):
            raise PromError(f"{self.url}: the answer is not Prometheus' query API (is it Prometheus?)") from None

    def _refused(self, e: urllib.error.HTTPError) -> str:
        try:
            doc = json.loads(e.read(64 << 10))
            return f"Prometheus refused the query: {doc['error']}"
        except (ValueError, KeyError, TypeError, OSError):
            return f"{self.url}: HTTP {e.code} {e.reason} (is it Prometheus?)"
