// Who may drive a worker: a shared token (compared in constant time) or mutual TLS, and a
// worker refuses to listen beyond loopback with neither. Real processes over gRPC.
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;

std::string Job(const std::string& name) {
  const std::string dir = TempDir() + "/sec-" + name;
  const std::string job = dir + ".fio";
  std::ofstream(job) << "[j]\nrw=write\nsize=256k\ndirectory=" << dir << "\n";
  return job;
}

int Controller(std::vector<std::string> args, const std::string& name, std::string* err) {
  args.insert(args.begin(), {Runfile("controller/iofleet"), "run"});
  TestProcess process(args, TempDir() + "/" + name);
  const int code = process.Wait(std::chrono::seconds(60)).value_or(-1);
  *err = process.Stderr();
  return code;
}

TEST(Security, TokenIsRequiredAndChecked) {
  const std::string token = TempDir() + "/token", wrong = TempDir() + "/wrong";
  std::ofstream(token) << "s3cret-token\n";
  std::ofstream(wrong) << "not-the-token\n";
  TestWorker worker("sec-token-worker", {"--allow-root", TempDir(), "--token-file", token});
  ASSERT_FALSE(worker.address().empty());
  std::string err;
  EXPECT_EQ(Controller({Job("none"), "--hosts", worker.address()}, "sec-none", &err), 1);
  EXPECT_THAT(err, HasSubstr(absl::StrCat("worker ", worker.address(), " refused the controller")));
  EXPECT_EQ(Controller({Job("wrong"), "--hosts", worker.address(), "--token-file", wrong}, "sec-wrong", &err), 1);
  EXPECT_THAT(err, HasSubstr("missing or wrong token"));
  EXPECT_TRUE(worker.process().WaitForOutput("wrong token", std::chrono::seconds(5), /*in_stderr=*/true));
  EXPECT_EQ(Controller({Job("right"), "--hosts", worker.address(), "--token-file", token}, "sec-right", &err), 0) << err;
}

TEST(Security, NoOpenListeningWithoutCredentials) {
  TestProcess worker({Runfile("worker/iofleet-worker"), "--listen", "0.0.0.0:0", "--allow-root", TempDir()}, TempDir() + "/sec-open");
  EXPECT_EQ(worker.Wait(std::chrono::seconds(10)).value_or(-1), 2);
  EXPECT_THAT(worker.Stderr(), HasSubstr("needs --token-file FILE or --tls-cert"));
}

TEST(Security, MutualTls) {
  const std::string d = TempDir() + "/pki";
  const std::string script = absl::StrCat(
      "set -e; mkdir -p ", d, "; cd ", d, "; printf 'subjectAltName=IP:127.0.0.1\\n' > san;",
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=iofleet-test-ca 2>/dev/null;",
      "for who in worker controller; do openssl req -newkey rsa:2048 -nodes -keyout $who.key -out $who.csr -subj /CN=$who 2>/dev/null;",
      "openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $who.pem -days 1 -extfile san 2>/dev/null; done");
  if (std::system(("PATH=/usr/bin:/bin; " + script).c_str()) != 0) GTEST_SKIP() << "openssl could not make test certificates";
  TestWorker worker("sec-tls-worker", {"--allow-root", TempDir(), "--tls-cert", d + "/worker.pem", "--tls-key", d + "/worker.key",
                                       "--tls-ca", d + "/ca.pem"});
  ASSERT_FALSE(worker.address().empty());
  std::string err;
  EXPECT_EQ(Controller({Job("tls"), "--hosts", worker.address(), "--tls-cert", d + "/controller.pem", "--tls-key", d + "/controller.key",
                        "--tls-ca", d + "/ca.pem"}, "sec-tls", &err), 0) << err;
  // Without a client certificate the worker cannot be reached.
  EXPECT_EQ(Controller({Job("plain"), "--hosts", worker.address()}, "sec-plain", &err), 1);
  EXPECT_THAT(err, HasSubstr(worker.address()));
}

}  // namespace
}  // namespace iofleet
