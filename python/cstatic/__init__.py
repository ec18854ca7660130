"""cstatic's Python side: the C7x host client (cstatic.c7x).

Deliberately thin: the compiler is the `cstatic` CLI; this package only
runs compiled modules on the C7x firmware through libc7x_arm_runtime.
"""
