OPENQASM 3.0;
include "stdgates.inc";
gate r(p0, p1) _gate_q_0 {
  U(p0, -pi/2 + p1, pi/2 - p1) _gate_q_0;
}
gate unitary _gate_q_0 {
  U(pi/2, -5.3971081833869725, 0) _gate_q_0;
}
gate unitary_0 _gate_q_0 {
  U(pi/2, 0, 0) _gate_q_0;
}
gate unitary_1 _gate_q_0 {
  U(pi/2, pi/2, -2.2555155297971794) _gate_q_0;
}
gate unitary_2 _gate_q_0 {
  U(pi/2, -0.8860771237926142, pi/2) _gate_q_0;
}
gate unitary_3 _gate_q_0 {
  U(pi/2, pi, 2.2555155297971794) _gate_q_0;
}
gate unitary_4 _gate_q_0 {
  U(pi/2, -pi, pi) _gate_q_0;
}
gate unitary_5 _gate_q_0 {
  U(pi/2, 0, 0) _gate_q_0;
}
gate unitary_6 _gate_q_0 {
  U(pi/2, pi/2, -2.2555155297971794) _gate_q_0;
}
bit[1] c;
qubit[3] q;
r(3*pi/8, pi/2) q[0];
unitary q[1];
unitary_0 q[2];
cx q[2], q[1];
unitary_1 q[1];
cx q[1], q[0];
r(pi/8, pi/2) q[0];
cx q[2], q[0];
r(-0.8563466906995303, pi/2) q[0];
cx q[1], q[0];
r(-0.07094852730208195, pi/2) q[0];
cx q[2], q[0];
barrier q[0], q[1], q[2];
U(0, 0, pi) q[0];
barrier q[0], q[1], q[2];
cx q[2], q[0];
r(0.07094852730208195, pi/2) q[0];
cx q[1], q[0];
r(0.8563466906995303, pi/2) q[0];
cx q[2], q[0];
r(-pi/8, pi/2) q[0];
cx q[1], q[0];
r(-3*pi/8, pi/2) q[0];
unitary_2 q[1];
cx q[2], q[1];
unitary_3 q[1];
unitary_4 q[2];
barrier q[0], q[1], q[2];
U(pi, 0, pi) q[0];
U(pi, 0, pi) q[1];
U(pi, 0, pi) q[2];
U(pi/2, 0, pi) q[2];
U(pi/2, 0, pi) q[2];
cx q[1], q[2];
U(0, 0, -pi/4) q[2];
cx q[0], q[2];
U(0, 0, pi/4) q[2];
cx q[1], q[2];
U(0, 0, pi/4) q[1];
U(0, 0, -pi/4) q[2];
cx q[0], q[2];
cx q[0], q[1];
U(0, 0, pi/4) q[0];
U(0, 0, -pi/4) q[1];
cx q[0], q[1];
U(pi, 0, pi) q[0];
U(pi, 0, pi) q[1];
U(0, 0, pi/4) q[2];
U(pi/2, 0, pi) q[2];
U(pi/2, 0, pi) q[2];
U(pi, 0, pi) q[2];
barrier q[0], q[1], q[2];
r(3*pi/8, pi/2) q[0];
unitary q[1];
unitary_5 q[2];
cx q[2], q[1];
unitary_6 q[1];
cx q[1], q[0];
r(pi/8, pi/2) q[0];
cx q[2], q[0];
r(-0.8563466906995303, pi/2) q[0];
cx q[1], q[0];
r(-0.07094852730208195, pi/2) q[0];
cx q[2], q[0];
barrier q[0], q[1], q[2];
c[0] = measure q[0];
