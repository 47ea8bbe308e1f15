"""The hidden tests that caught the planted bug pass, from the grader's own renamed copy, and so does the rest of
the project's suite; the tests the model saw are untouched; and the calls the pristine suite made into the project
(its twins: plain arguments, recorded outcomes) give the same outcomes when made in the model's code, judged here
rather than by a test report."""

from realpy_grade import grade

grade()
