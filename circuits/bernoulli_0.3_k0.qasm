OPENQASM 3.0;
include "stdgates.inc";
bit[1] c;
qubit[1] q;
U(1.1592794807274085, 0, 0) q[0];
barrier q[0];
c[0] = measure q[0];
