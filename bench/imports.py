# imports.py - the Python workload of bench/realprogs.sh (issue 31): Debian's
# python3.11 importing some 250 modules of its standard library, then
# Debian's numpy, scipy.linalg, scipy.sparse and eleven more of scipy's
# subpackages, using numpy and scipy a little (a 300x300 solve, a sparse
# product), then parsing and dumping every top-level module of the standard
# library with ast (ast.dump recurses in Python as deep as the tree: deep
# Python stacks). Nothing is timed here: the bench times the whole process.
# The list is fixed (not pkgutil's walk) so that every run imports the same
# modules; those that open windows, print or need a package Debian splits
# off (tkinter, turtle, idlelib, antigravity, this, __hello__) are left
# out. PEP 594's deprecated modules are in, their DeprecationWarning
# silenced. Prints "imports: N modules, M characters of ast.dump" at the
# end.
#   usage: python3.11 imports.py
import importlib
import sys
import warnings

warnings.simplefilter("ignore")

STDLIB = """
    __future__ _collections_abc _compat_pickle _compression _markupbase _pydecimal _pyio
    _strptime _threading_local _weakrefset abc aifc argparse array ast asynchat asyncio
    asyncio.subprocess asyncore atexit audioop base64 bdb binascii bisect bz2 cProfile
    calendar cgi cgitb chunk cmath cmd code codecs codeop collections collections.abc
    colorsys compileall concurrent.futures concurrent.futures.process
    concurrent.futures.thread configparser contextlib contextvars copy copyreg crypt csv
    ctypes ctypes.util curses curses.ascii curses.panel curses.textpad dataclasses datetime
    dbm dbm.dumb decimal difflib dis doctest email email.charset email.encoders
    email.generator email.header email.headerregistry email.iterators email.message
    email.mime.application email.mime.audio email.mime.image email.mime.multipart
    email.mime.text email.parser email.policy email.utils encodings.idna encodings.utf_16
    enum errno faulthandler filecmp fileinput fnmatch fractions ftplib functools gc
    getopt getpass gettext glob graphlib gzip hashlib heapq hmac html html.entities
    html.parser http http.client http.cookiejar http.cookies http.server imaplib imghdr
    importlib importlib.abc importlib.machinery importlib.metadata importlib.resources
    importlib.util inspect io ipaddress itertools json json.decoder json.encoder keyword
    linecache locale logging logging.config logging.handlers lzma mailbox mailcap marshal
    math mimetypes mmap modulefinder multiprocessing multiprocessing.connection
    multiprocessing.managers multiprocessing.pool multiprocessing.queues
    multiprocessing.shared_memory netrc nntplib ntpath numbers opcode operator optparse os
    pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posixpath pprint
    profile pstats pty py_compile pyclbr pydoc queue quopri random re reprlib rlcompleter
    runpy sched secrets select selectors shelve shlex shutil signal smtpd smtplib sndhdr
    socket socketserver sqlite3 ssl stat statistics string stringprep struct subprocess
    sunau symtable sysconfig tabnanny tarfile telnetlib tempfile textwrap threading timeit
    token tokenize tomllib trace traceback tracemalloc tty types typing unicodedata
    unittest unittest.mock urllib.error urllib.parse urllib.request urllib.response
    urllib.robotparser uu uuid wave weakref wsgiref.handlers wsgiref.simple_server
    wsgiref.util wsgiref.validate xdrlib xml.dom.minidom xml.dom.pulldom xml.etree.ElementTree
    xml.parsers.expat xml.sax xml.sax.handler xml.sax.saxutils xmlrpc.client xmlrpc.server
    zipapp zipfile zipimport zlib zoneinfo
""".split()

for name in STDLIB:
    importlib.import_module(name)

import numpy
import scipy.linalg
import scipy.sparse

SCIPY = """
    scipy.cluster scipy.fft scipy.integrate scipy.interpolate scipy.io scipy.ndimage
    scipy.optimize scipy.signal scipy.spatial scipy.special scipy.stats
""".split()

for name in SCIPY:
    importlib.import_module(name)

rng = numpy.random.default_rng(31)
a = rng.standard_normal((300, 300))
x = scipy.linalg.solve(a, rng.standard_normal(300))
s = scipy.sparse.random(2000, 2000, density=0.01, random_state=31, format="csr")
y = (s @ s.T).sum() + x.sum()

import ast
import glob
import os

dumped = 0
for path in sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py"))):
    with open(path, encoding="utf-8") as f:
        dumped += len(ast.dump(ast.parse(f.read(), path)))
print("imports: %d modules, %d characters of ast.dump" % (len(sys.modules), dumped))
