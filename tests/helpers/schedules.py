"""Scheme and schedule texts more than one test file builds on."""

#: Strassen's algorithm through temporaries X (A-shaped), Y (B-shaped) and T (C-shaped): format it
#: with ``name``, ``more_temps`` (more temp lines), ``m6_left`` and ``m6_target`` (M6's left operand
#: and its targets, to scale them); C22 is written by product statements alone, C11 also by an update.
STRASSEN_THROUGH_TEMPORARIES = """use "strassen.bl"
schedule {name} for strassen:
  temp X: A
  temp Y: B
  temp T: C{more_temps}
  stage s1: X = A11 + A22; Y = B11 + B22
  stage p1: X * Y -> +C11 +C22
  stage s2: X = A21 + A22
  stage p2: X * B11 -> +C21 -C22
  stage s3: Y = B12 - B22
  stage p3: A11 * Y -> +C12 +C22
  stage s4: Y = B21 - B11
  stage p4: A22 * Y -> +C11 +C21
  stage s5: X = A11 + A12
  stage p5: X * B22 -> -C11 +C12
  stage s6: X = {m6_left}; Y = B11 + B12
  stage p6: X * Y -> {m6_target}
  stage s7: X = A12 - A22; Y = B21 + B22
  stage p7: T = X * Y
  stage e7: C11 += T
"""


#: Two products of one A block with two B blocks, ⟨1,1,2;2⟩: schedules on it move blocks of two shapes.
PAIR = """
algorithm pair <1,1,2;2>:
  M1 = A11 * B11
  M2 = A11 * B12
  C11 = M1
  C12 = M2
"""


#: Strassen's seven products with their operand sums written in the statements, one stage: append it to a
#: ``schedule NAME for ALGORITHM`` line (the algorithm Strassen's, or one with Strassen's products).
STRASSEN_SUMS_STAGE = """  stage p: (A11 + A22) * (B11 + B22) -> +C11 +C22
           (A21 + A22) * B11 -> +C21 -C22
           A11 * (B12 - B22) -> +C12 +C22
           A22 * (B21 - B11) -> +C11 +C21
           (A11 + A12) * B22 -> -C11 +C12
           (A21 - A11) * (B11 + B12) -> +C22
           (A12 - A22) * (B21 + B22) -> +C11
"""


#: A schedule whose products multiply sums of blocks (fused leaves run it, cublas leaves cannot).
SUM_PRODUCT = """\
algorithm dot <1,2,1;2>:
  M1 = (A11 + 2*A12) * B11
  M2 = A12 * (B21 - 2*B11)
  C11 = M1 + M2
schedule sums for dot:
  stage p: (A11 + 2*A12) * B11 -> +C11
  stage q: A12 * (B21 - 2*B11) -> +C11
"""


#: ⟨1,2,1;2⟩, the classical product of a row of two blocks and a column of two: C11 = A11·B11 + A12·B21
#: (the tests of the schedule verifier append a schedule for it).
INNER_TWO = """\
algorithm two <1,2,1;2>:
  M1 = A11 * B11
  M2 = A12 * B21
  C11 = M1 + M2

"""


#: ⟨1,1,1;1⟩, the smallest algorithm, C11 = A11·B11: append a schedule for ``one`` to it.
ONE = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n\n"


def schedule_for(algorithm: str, schedule: str):
    """The schedule of ``algorithm + schedule`` (a program's source holding one), and its algorithm."""
    from bilinear.frontend import program_from_text

    program = program_from_text(algorithm + schedule, "one.bl")
    (main,) = program.schedules
    return main, program.algorithm(main.algorithm)


def verification_errors(text: str) -> list:
    """The errors of every entry that verifying ``text`` (a program's source) reports."""
    from bilinear.frontend import program_from_text
    from bilinear.verify import verify_program

    return [error for entry in verify_program(program_from_text(text, "verified.bl")).entries for error in entry.errors]
