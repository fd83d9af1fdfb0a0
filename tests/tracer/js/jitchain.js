// jitchain.js - a known JavaScript call chain for tests/tracer/test_jit.sh:
// outer -> middle -> leaf -> Buffer.allocUnsafeSlow, whose memory node's
// ArrayBuffer allocator takes with malloc (a native path under V8's JIT
// code). Run enough times that V8 compiles them (baseline, optimized);
// the last 64 buffers are kept.
//   node jitchain.js N          N times, then "DONE", then ends by SIGKILL
//                               (no teardown: the buffers stay live)
//   node jitchain.js wait N     "READY", then N times once a line comes on
//                               stdin, "DONE", and waits for another line
'use strict';
const keep = [];
function leaf(i) {
	const b = Buffer.allocUnsafeSlow(65536 + (i & 7));
	keep[i & 63] = b;
	return b.length;
}
function middle(i) {
	return leaf(i) + 1;
}
function outer(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += middle(i);
	return s;
}
const wait = process.argv[2] === 'wait';
const n = Number(process.argv[wait ? 3 : 2] || 3000);
function run() {
	outer(n);
	process.stdout.write('DONE\n');
	if (!wait)
		process.kill(process.pid, 'SIGKILL');
}
if (wait) {
	let lines = 0;
	process.stdin.setEncoding('utf8');
	process.stdin.on('data', (d) => {
		lines += d.split('\n').length - 1;
		if (lines === 1)
			run();
		else if (lines >= 2)
			process.exit(0);
	});
	process.stdout.write('READY\n');
} else {
	run();
}
