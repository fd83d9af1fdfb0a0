# chain_b.py - the other half of chain_a.py's chain (its line numbers are
# tests/tracer/test_python.sh's: keep them).
import chain_a


def f2():
    return chain_a.f3()


def f4():
    return chain_a.f5()
