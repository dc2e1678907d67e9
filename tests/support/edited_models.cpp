#include "tests/support/edited_models.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "tests/support/reference_2026.h"
#include "tests/support/testdata.h"

namespace inferscope::testing {

namespace {

// testdata(relative) rewritten by `edit` (metadata and tensors copied into the writer first,
// the tensors for which `keep` says so), then loaded from memory.
std::shared_ptr<const Model> load_edited(const std::string& relative, const std::function<bool(const gguf::TensorInfo&)>& keep,
                                         const std::function<void(const gguf::File&, gguf::Writer&)>& edit) {
  auto file = gguf::File::open(testdata(relative));
  EXPECT_TRUE(file) << file.message();
  if (!file) return nullptr;
  gguf::Writer writer;
  writer.copy_metadata(**file, "");
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (keep(t)) writer.add_tensor_copy(*file, t);
  }
  edit(**file, writer);
  auto bytes = writer.write_to_memory();
  EXPECT_TRUE(bytes) << bytes.message();
  if (!bytes) return nullptr;
  auto edited = gguf::File::parse(std::move(*bytes), relative + " (edited)");
  EXPECT_TRUE(edited) << edited.message();
  if (!edited) return nullptr;
  auto model = Model::load_file(*edited);
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

}  // namespace

std::shared_ptr<const Model> load_first_layers(const std::string& relative, int64_t n_layers) {
  const auto kept = [n_layers](const gguf::TensorInfo& t) {
    if (t.name.rfind("blk.", 0) != 0) return true;
    return std::stoll(t.name.substr(4, t.name.find('.', 4) - 4)) < n_layers;
  };
  return load_edited(relative, kept, [n_layers](const gguf::File& file, gguf::Writer& w) {
    auto arch = file.get_string("general.architecture");
    ASSERT_TRUE(arch) << arch.message();
    w.add_u32(*arch + ".block_count", static_cast<uint32_t>(n_layers));
  });
}

Result<std::shared_ptr<const Model>> try_load_reference_edited(const std::string& reference,
                                                               const std::function<void(gguf::Writer&)>& edit,
                                                               const std::string& drop_tensor) {
  auto ref = load_reference_2026(reference);
  if (!ref) return ref.status();
  auto plain = gguf::File::open(ref->model_path);
  if (!plain) return plain.status();
  gguf::Writer w;
  w.copy_metadata(**plain, "");
  for (const gguf::TensorInfo& t : (*plain)->tensors()) {
    if (t.name != drop_tensor) w.add_tensor_copy(*plain, t);
  }
  edit(w);
  auto bytes = w.write_to_memory();
  if (!bytes) return bytes.status();
  auto edited = gguf::File::parse(std::move(*bytes), reference + " (edited)");
  if (!edited) return edited.status();
  return Model::load_file(*edited);
}

std::shared_ptr<const Model> load_with_token_text(const std::string& relative, int32_t id, const std::string& text) {
  return load_edited(relative, [](const gguf::TensorInfo&) { return true; },
                     [id, &text](const gguf::File& file, gguf::Writer& w) {
                       auto tokens = file.get_string_array("tokenizer.ggml.tokens");
                       ASSERT_TRUE(tokens) << tokens.message();
                       std::vector<std::string> edited = **tokens;
                       edited.at(static_cast<size_t>(id)) = text;
                       w.add_string_array("tokenizer.ggml.tokens", std::move(edited));
                     });
}

}  // namespace inferscope::testing
