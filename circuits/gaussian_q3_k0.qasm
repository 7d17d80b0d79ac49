OPENQASM 3.0;
include "stdgates.inc";
gate r(p0, p1) _gate_q_0 {
  U(p0, -pi/2 + p1, pi/2 - p1) _gate_q_0;
}
gate unitary _gate_q_0 {
  U(pi/2, 1.1981191555793147, pi) _gate_q_0;
}
gate unitary_0 _gate_q_0 {
  U(pi/2, -4.79501111045365, 0) _gate_q_0;
}
gate unitary_1 _gate_q_0 {
  U(1.17783584450812, 0, 0) _gate_q_0;
}
gate unitary_2 _gate_q_0 {
  U(pi/2, pi/2, -1.619560143518208) _gate_q_0;
}
gate unitary_3 _gate_q_0 {
  U(pi/2, -pi/2, 1.6634503041948197) _gate_q_0;
}
gate unitary_4 _gate_q_0 {
  U(pi/2, -4.405675104506392, -pi/2) _gate_q_0;
}
gate unitary_5 _gate_q_0 {
  U(pi/2, pi/2, 4.595394938928646) _gate_q_0;
}
bit[1] c;
qubit[4] q;
r(pi/2, pi/2) q[0];
unitary q[1];
unitary_0 q[2];
unitary_1 q[3];
cx q[3], q[2];
unitary_2 q[2];
cx q[2], q[1];
unitary_3 q[1];
cx q[3], q[1];
unitary_4 q[1];
cx q[2], q[1];
unitary_5 q[1];
cx q[1], q[0];
r(-0.1623433067253205, pi/2) q[0];
cx q[2], q[0];
cx q[1], q[0];
r(-0.30771068594601664, pi/2) q[0];
cx q[3], q[0];
cx q[1], q[0];
r(-0.03280883506153362, pi/2) q[0];
cx q[2], q[0];
cx q[1], q[0];
r(-0.5625729887778689, pi/2) q[0];
cx q[3], q[0];
barrier q[0], q[1], q[2], q[3];
c[0] = measure q[0];
