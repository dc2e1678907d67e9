// bench's record of each run in the shared SQLite store (engine/store): the same file, and so the
// same schema, as the desktop app's chat history. One benchmark_runs row per run: the model, the
// backend, what was asked for (config_json) and what was measured (metrics_json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "engine/compare/comparison.h"

namespace inferscope::cli {

inline const OptionSpec kDatabaseOption{
    "database", "FILE",
    "SQLite database to record the run in (default: the desktop app's, $INFERSCOPE_DATABASE or "
    "~/.local/share/Inferscope/Inferscope/inferscope.sqlite)"};
inline const OptionSpec kNoRecordOption{"no-record", nullptr, "do not record the run in the database"};

// The desktop app's database: $INFERSCOPE_DATABASE when set, else inferscope.sqlite in the folder
// Qt's AppDataLocation gives the app (organization and application "Inferscope"):
// ${XDG_DATA_HOME:-$HOME/.local/share}/Inferscope/Inferscope.
std::string default_database_path();

// Records the run that bench's JSON output `figures` describes in --database (or the default),
// unless --no-record; says where on stderr. A database that cannot be opened or written
// (locked past the busy timeout, damaged, from a newer version, no permission) gets one warning
// line on stderr instead: the benchmark's output and exit code never depend on the database.
void record_bench_run(const Args& args, const nlohmann::json& figures);
// The same for a comparison (engine/compare/comparison_record.h): one row of kind "compare".
void record_compare_run(const Args& args, const ComparisonResult& result);

}  // namespace inferscope::cli
