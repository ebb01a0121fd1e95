// hvd::Status helpers: HVD_RETURN_IF_ERROR, StatusOr and HVD_ASSIGN_OR_RETURN.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hvd/status.h"

namespace hvd {
namespace {

// Runs `first`; `reached` records whether the code after the macro ran.
Status two_steps(const Status& first, bool* reached) {
  HVD_RETURN_IF_ERROR(first);
  *reached = true;
  return Status::Internal("second step");
}

TEST(StatusHelpers, ReturnIfErrorReturnsTheFailureAndSkipsTheRest) {
  bool reached = false;
  Status s = two_steps(Status::Timeout("peer 3 is gone"), &reached);
  EXPECT_FALSE(reached);
  EXPECT_EQ(s.code(), StatusCode::kTimeout);
  EXPECT_EQ(s.message(), "peer 3 is gone");
}

TEST(StatusHelpers, ReturnIfErrorContinuesOnOk) {
  bool reached = false;
  Status s = two_steps(Status::OK(), &reached);
  EXPECT_TRUE(reached);
  EXPECT_EQ(s.message(), "second step");
}

TEST(StatusHelpers, ReturnIfErrorEvaluatesItsArgumentOnce) {
  int calls = 0;
  auto step = [&] {
    ++calls;
    return Status::OK();
  };
  auto run = [&]() -> Status {
    HVD_RETURN_IF_ERROR(step());
    return Status::OK();
  };
  EXPECT_TRUE(run().ok());
  EXPECT_EQ(calls, 1);
}

TEST(StatusHelpers, ReturnIfErrorIsOneStatementUnderIf) {
  // Without the do/while wrapper the `else` would not compile or would bind wrongly.
  auto run = [](bool check, const Status& s) -> Status {
    if (check)
      HVD_RETURN_IF_ERROR(s);
    else
      return Status::Precondition("not checked");
    return Status::OK();
  };
  EXPECT_EQ(run(true, Status::Aborted("x")).code(), StatusCode::kAborted);
  EXPECT_TRUE(run(true, Status::OK()).ok());
  EXPECT_EQ(run(false, Status::OK()).code(), StatusCode::kPrecondition);
}

TEST(StatusOrTest, HoldsAValue) {
  StatusOr<std::string> v = std::string("plan");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(*v, "plan");
  EXPECT_EQ(v->size(), 4u);
  EXPECT_EQ(v.value(), "plan");
}

TEST(StatusOrTest, HoldsAFailure) {
  StatusOr<int> v = Status::Mismatch("ranks disagree");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kMismatch);
  EXPECT_EQ(v.status().message(), "ranks disagree");
}

TEST(StatusOrTest, AnOkStatusWithoutAValueIsAnError) {
  StatusOr<int> v = Status::OK();
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
}

TEST(StatusOrTest, MovesMoveOnlyValuesOut) {
  StatusOr<std::unique_ptr<int>> v = std::make_unique<int>(7);
  ASSERT_TRUE(v.ok());
  std::unique_ptr<int> p = std::move(v).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

TEST(StatusOrDeathTest, ValueOfAFailureAborts) {
  StatusOr<int> v = Status::Timeout("late");
  EXPECT_DEATH((void)v.value(), "StatusOr::value\\(\\) on an error: .*late");
}

StatusOr<int> parse_positive(int x) {
  if (x <= 0) return Status::InvalidArgument("not positive: " + std::to_string(x));
  return x;
}

// Doubles a parsed value; `reached` records whether the code after the macro ran.
StatusOr<int> doubled(int x, bool* reached) {
  HVD_ASSIGN_OR_RETURN(const int v, parse_positive(x));
  *reached = true;
  return 2 * v;
}

TEST(StatusOrTest, AssignOrReturnAssignsOnSuccess) {
  bool reached = false;
  StatusOr<int> r = doubled(21, &reached);
  EXPECT_TRUE(reached);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
}

TEST(StatusOrTest, AssignOrReturnReturnsTheFailure) {
  bool reached = false;
  StatusOr<int> r = doubled(-1, &reached);
  EXPECT_FALSE(reached);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "not positive: -1");
}

TEST(StatusOrTest, AssignOrReturnIntoAnExistingVariableAndAPlainStatus) {
  auto run = [](int x, int* out) -> Status {
    int v = 0;
    HVD_ASSIGN_OR_RETURN(v, parse_positive(x));
    HVD_ASSIGN_OR_RETURN(v, parse_positive(v + 1));  // twice in one scope
    *out = v;
    return Status::OK();
  };
  int out = 0;
  EXPECT_TRUE(run(4, &out).ok());
  EXPECT_EQ(out, 5);
  out = 0;
  EXPECT_EQ(run(0, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, 0);
}

}  // namespace
}  // namespace hvd
