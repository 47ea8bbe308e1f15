"""The coupon is configured; hidden tests of quotes and orders with and without coupons pass; tests were added."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.json_key_equals("config/service.json", f"pricing.coupons.{v['coupon_code']}", v["coupon_percent"])
g.data_unchanged_except("config/service.json", ["pricing.coupons"])
g.node_tests_pass(["test"], extra_tests=["coupon_hidden.test.mjs"], min_passed=v["test_count"] + 1 + 5)
g.finish()
