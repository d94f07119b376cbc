// Fuzz target: kubeconfig parsing and resolution (load_kubeconfig on the input as a file, current-context and
// a named context), the exec-plugin ExecCredential decoder and the RFC 3339 timestamps they contain.
#include <cstdint>
#include <fstream>
#include <string>

#include "protocol/kube/kube_config.hpp"
#include "tests/support/scratch_dir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One scratch directory per process, removed at exit; relative references in the input resolve inside it.
  static const bootstorm::test_support::ScratchDir scratch("fuzz-kubeconfig");
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = (scratch / "config").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  using namespace bootstorm::kube;
  auto current = load_kubeconfig({path}, "", true);
  if (current) (void)exec_info_json(current->auth.exec.value_or(ExecConfig{}), *current);
  (void)load_kubeconfig({path, path}, "lab", false);
  (void)parse_exec_credential(text, "client.authentication.k8s.io/v1");
  (void)parse_exec_credential(text, "client.authentication.k8s.io/v1beta1");
  (void)parse_rfc3339(text);
  return 0;
}
