"""Device noise: calibration snapshots, their Aer noise models, and the calibration-aware depth
model (how much Grover contrast survives a device, and the deepest useful power).

Layer: imported by execution, qmc, mitigation and above; imports only oracles and grover.
"""
