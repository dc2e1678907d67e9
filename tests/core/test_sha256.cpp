// SHA-256 against the FIPS 180-2 / NIST example vectors, and streaming == one-shot.
#include "engine/core/sha256.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace inferscope {
namespace {

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(Sha256::hex_of("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex_of("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256::hex_of(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string four_blocks =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  EXPECT_EQ(Sha256::hex_of(four_blocks.data(), four_blocks.size()),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionA) {
  Sha256 h;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  EXPECT_EQ(Sha256::hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // Lengths around the 55/56/64-byte padding edges, checked against independently computed values.
  const std::string a55(55, 'a'), a56(56, 'a'), a64(64, 'a');
  EXPECT_EQ(Sha256::hex_of(a55.data(), a55.size()), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256::hex_of(a56.data(), a56.size()), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256::hex_of(a64.data(), a64.size()), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, StreamingMatchesOneShot) {
  std::vector<uint8_t> data(10000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + (i >> 7));
  const std::string expected = Sha256::hex_of(data.data(), data.size());
  for (size_t chunk : {1u, 3u, 63u, 64u, 65u, 127u, 1000u}) {
    Sha256 h;
    for (size_t off = 0; off < data.size(); off += chunk) {
      h.update(data.data() + off, std::min(chunk, data.size() - off));
    }
    EXPECT_EQ(Sha256::hex(h.finish()), expected) << "chunk " << chunk;
  }
  Sha256 h;
  h.update("garbage", 7);
  h.reset();
  h.update(data.data(), data.size());
  EXPECT_EQ(Sha256::hex(h.finish()), expected);
}

}  // namespace
}  // namespace inferscope
