#pragma once
// KubeVirt objects as a client of the tests writes them.
#include <nlohmann/json.hpp>
#include <string>

namespace bootstorm::test_support {

// A VirtualMachine with one DataVolume template cloned from the DataSource golden/`data_source`, one core,
// 256 MiB, one masquerade interface on the pod network.
inline nlohmann::json vm_manifest(const std::string& ns, const std::string& name,
                                  const std::string& run_strategy,
                                  const nlohmann::json& labels = nlohmann::json::object(),
                                  const std::string& data_source = "tiny-golden") {
  using json = nlohmann::json;
  return {
      {"apiVersion", "kubevirt.io/v1"},
      {"kind", "VirtualMachine"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
      {"spec",
       {{"runStrategy", run_strategy},
        {"dataVolumeTemplates",
         json::array(
             {{{"metadata", {{"name", name + "-root"}}},
               {"spec",
                {{"sourceRef", {{"kind", "DataSource"}, {"name", data_source}, {"namespace", "golden"}}},
                 {"storage", {{"resources", {{"requests", {{"storage", "1Gi"}}}}}}}}}}})},
        {"template",
         {{"metadata", {{"labels", {{"kubevirt.io/domain", name}}}}},
          {"spec",
           {{"domain",
             {{"cpu", {{"cores", 1}}},
              {"memory", {{"guest", "256Mi"}}},
              {"devices",
               {{"disks", json::array({{{"name", "root"}, {"disk", {{"bus", "virtio"}}}}})},
                {"interfaces", json::array({{{"name", "default"}, {"masquerade", json::object()}}})}}}}},
            {"networks", json::array({{{"name", "default"}, {"pod", json::object()}}})},
            {"volumes", json::array({{{"name", "root"}, {"dataVolume", {{"name", name + "-root"}}}}})}}}}}}}};
}

}  // namespace bootstorm::test_support
