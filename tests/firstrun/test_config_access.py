"""Tested in tests/firstrun/test_setup.py and tests/firstrun/test_doctor.py: `setup` and `doctor`
read and check the config file through what the command line hands them."""
