# The suite's independent servers written in Go (tests/support/vcsim, ...) are Go modules: each folder has its
# own go.mod and go.sum, which pin every module it builds from. The product never links Go; only `all` of a
# preset with tests builds these programs.
#
# Which Go: BOOTSTORM_GO, set by deploy/setup (it finds or installs one and says which), else the first `go`
# found. It must be 1.21 or newer, the first release that reads a module's `go` line as a toolchain
# requirement: with GOTOOLCHAIN=auto a go older than that line (Debian 12's bookworm-backports has 1.23)
# fetches the exact release the line names from the Go module proxy, checked against the checksum database,
# once per machine. Debian 12's own golang-go (1.19) cannot build these modules.
#
# Where modules come from: the module cache (`go env GOMODCACHE`), filled by deploy/setup's `go mod download`
# before the build; the build itself runs with -mod=readonly, so go.mod and go.sum are never rewritten and a
# module whose hash differs from go.sum's fails the build. The Go build cache is kept in the build tree.
# -buildvcs=false: the binary carries no git stamp (a clean clone, a tarball and a dirty tree build the same).

set(BOOTSTORM_GO_MIN_VERSION 1.21)

if(NOT BOOTSTORM_GO)
  find_program(BOOTSTORM_GO_FOUND NAMES go HINTS /usr/local/go/bin NO_CACHE)
  if(BOOTSTORM_GO_FOUND)
    set(BOOTSTORM_GO ${BOOTSTORM_GO_FOUND} CACHE FILEPATH "the go command that builds the suite's Go servers")
  endif()
endif()

set(BOOTSTORM_GO_PROBLEM "")
if(NOT BOOTSTORM_GO)
  set(BOOTSTORM_GO_PROBLEM "no go command found")
else()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env GOTOOLCHAIN=local ${BOOTSTORM_GO} env GOVERSION
                  OUTPUT_VARIABLE go_version OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE go_rc ERROR_QUIET)
  string(REGEX REPLACE "^go([0-9]+\\.[0-9]+).*" "\\1" go_release "${go_version}")
  if(NOT go_rc EQUAL 0 OR NOT go_release MATCHES "^[0-9]+\\.[0-9]+$")
    set(BOOTSTORM_GO_PROBLEM "${BOOTSTORM_GO} does not report its version (`go env GOVERSION`)")
  elseif(go_release VERSION_LESS BOOTSTORM_GO_MIN_VERSION)
    set(BOOTSTORM_GO_PROBLEM "${BOOTSTORM_GO} is ${go_version}, older than ${BOOTSTORM_GO_MIN_VERSION}")
  else()
    message(STATUS "Go for the suite's servers: ${BOOTSTORM_GO} (${go_version})")
  endif()
endif()

# bootstorm_add_go_module_program(<target> OUTPUT <file> MODULE <dir> [LDFLAGS <flag>...])
# Builds the main package of the Go module in <dir> (relative to the current source dir) into <file>; <target>
# is built by `all`. LDFLAGS are added to the linker's (e.g. -X for a version stamp). When no usable go is found, building <target> fails with what to install (configure does
# not: `deploy/setup demo` builds only the bootstorm binary and needs no Go).
function(bootstorm_add_go_module_program target)
  cmake_parse_arguments(G "" "OUTPUT;MODULE" "LDFLAGS" ${ARGN})
  if(BOOTSTORM_GO_PROBLEM)
    set(message "${target}: ${BOOTSTORM_GO_PROBLEM}. The suite's Go servers need Go ${BOOTSTORM_GO_MIN_VERSION} or "
                "newer: `deploy/setup test` finds or installs one (on Debian 12, golang-1.23-go from "
                "bookworm-backports), or pass -DBOOTSTORM_GO=/path/to/go, or configure with -DBOOTSTORM_TESTS=OFF.")
    string(JOIN "" message ${message})
    message(STATUS "${message}")
    add_custom_target(${target} ALL COMMAND ${CMAKE_COMMAND} -E echo "${message}" COMMAND ${CMAKE_COMMAND} -E false
                      VERBATIM)
    return()
  endif()
  set(module ${CMAKE_CURRENT_SOURCE_DIR}/${G_MODULE})
  file(GLOB sources CONFIGURE_DEPENDS ${module}/*.go)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${target}-go)
  file(RELATIVE_PATH shown ${PROJECT_SOURCE_DIR} ${module})
  list(JOIN G_LDFLAGS " " extra_ldflags)
  add_custom_command(
    OUTPUT ${G_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E env GOTOOLCHAIN=auto "GOFLAGS=-mod=readonly -buildvcs=false" GOWORK=off
            GOCACHE=${work}/cache
            CGO_ENABLED=0 ${BOOTSTORM_GO} build -trimpath "-ldflags=-s -w ${extra_ldflags}" -o ${G_OUTPUT} .
    WORKING_DIRECTORY ${module}
    DEPENDS ${sources} ${module}/go.mod ${module}/go.sum
    COMMENT "Building ${target} (Go module ${shown}, pinned by its go.sum)"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${G_OUTPUT})
endfunction()
