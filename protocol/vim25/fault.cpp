// vim25 faults -> user-facing errors (see fault.hpp).
#include "protocol/vim25/fault.hpp"

#include <string>

namespace bootstorm::vsphere::vim25 {

Error fault_error(const SoapFault& f, std::string_view what_view) {
  const std::string what(what_view);
  const std::string said = f.message.empty() ? std::string() : " (vCenter: " + f.message + ")";
  if (f.is("InvalidLogin")) {
    return make_error(ErrorKind::auth, what + " failed: vCenter rejected the user name or password" + said,
                      "check platform.username and the password (platform.passwordEnv / passwordFile)");
  }
  if (f.is("NotAuthenticated")) {
    return make_error(ErrorKind::auth, what + " failed: the session is not (or no longer) logged in" + said,
                      "the session expired and logging in again did not help; check that the user can log "
                      "in and that nothing logs this session out");
  }
  if (f.is("NoPermission")) {
    std::string message = what + " failed: the vCenter user lacks privilege " +
                          (f.privilege.empty() ? std::string("(not named by vCenter)") : f.privilege);
    if (!f.object.empty()) message += " on " + f.object;
    return make_error(ErrorKind::auth, message + said,
                      "add the privilege to the user's role on that object (vSphere Client: Administration > "
                      "Roles), or run with a user whose role has it");
  }
  if (f.is("ManagedObjectNotFound")) {
    return make_error(ErrorKind::not_found,
                      what + " failed: " + (f.object.empty() ? std::string("an object") : f.object) +
                          " no longer exists" + said,
                      "it was deleted while the run used it; run `bootstorm cleanup` and start again");
  }
  if (f.is("InvalidPowerState")) {
    // existingState is a VirtualMachinePowerState: poweredOn, poweredOff, suspended.
    const std::string state = f.state == "poweredOn"    ? "powered on"
                              : f.state == "poweredOff" ? "powered off"
                              : f.state.empty()         ? "in another power state"
                                                        : f.state;
    return make_error(ErrorKind::conflict, what + " failed: the VM is " + state + said);
  }
  if (f.is("DuplicateName")) {
    return make_error(ErrorKind::conflict,
                      what + " failed: the name " +
                          (f.name.empty() ? std::string("chosen") : "'" + f.name + "'") +
                          " is already taken" + said,
                      "an earlier run left it behind: run `bootstorm cleanup`, or rename it");
  }
  if (f.is("TaskInProgress")) {
    return make_error(ErrorKind::conflict,
                      what + " failed: another task is running on the object" +
                          (f.object.empty() ? std::string() : " (" + f.object + ")") + said,
                      "wait for it to finish (vSphere Client: Recent Tasks) and start again");
  }
  const std::string type = f.type.empty() ? (f.code.empty() ? std::string("SOAP fault") : f.code) : f.type;
  return make_error(ErrorKind::api, what + " failed: " + type + (f.message.empty() ? "" : ": " + f.message));
}

}  // namespace bootstorm::vsphere::vim25
