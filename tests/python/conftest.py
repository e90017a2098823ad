"""The checkout's root on the path, so that the tests import the calibrate package as
`python3 -m calibrate...` from the root finds it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
