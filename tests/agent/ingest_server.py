#!/usr/bin/env python3
# ingest_server.py - a stand-in for Grafana Pyroscope's POST /ingest
# (its HTTP API: name, from, until, format=pprof in the query; the body
# multipart/form-data with the profile in its "profile" part), for
# tests/agent/test_agent.sh: it checks each request as Pyroscope would
# need it, saves the profile as DIR/push-N.pb.gz and says one line per
# request on standard output ("push N name=NAME from=F until=U bytes=B",
# or "bad N WHY"), which the test waits on. Answers 200, or 400 with why.
#   usage: ingest_server.py DIR   (prints "listening PORT" first)
import email.parser
import email.policy
import http.server
import sys
import urllib.parse

DIR = sys.argv[1]
count = 0


class Ingest(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, line):
        print(line, flush=True)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        global count
        count += 1
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query, strict_parsing=True)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if url.path != "/ingest":
            return self.answer(400, f"bad {count} path {url.path}")
        for k in ("name", "from", "until", "format"):
            if len(q.get(k, [])) != 1:
                return self.answer(400, f"bad {count} query {k}")
        if q["format"][0] != "pprof":
            return self.answer(400, f"bad {count} format {q['format'][0]}")
        try:
            start, end = int(q["from"][0]), int(q["until"][0])
        except ValueError:
            return self.answer(400, f"bad {count} from/until not numbers")
        if start > end:
            return self.answer(400, f"bad {count} from after until")
        ctype = self.headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return self.answer(400, f"bad {count} content type {ctype}")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        parts = {p.get_param("name", header="content-disposition"): p
                 for p in msg.iter_parts()}
        if "profile" not in parts:
            return self.answer(400, f"bad {count} no profile part")
        prof = parts["profile"].get_payload(decode=True)
        if prof[:2] != b"\x1f\x8b":
            return self.answer(400, f"bad {count} profile not gzip")
        with open(f"{DIR}/push-{count}.pb.gz", "wb") as f:
            f.write(prof)
        self.answer(200, f"push {count} name={q['name'][0]} from={start} until={end} "
                         f"bytes={len(prof)}")


server = http.server.HTTPServer(("127.0.0.1", 0), Ingest)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
