// The texts the weight lab ships (written for Inferscope, CC0): simple English prose, the kind
// of text small story models are trained on, with some plain technical and factual sentences
// for larger models. The calibration text and the evaluation text share no sentence, so the
// report's quality figures are held out from what GPTQ and AWQ saw.
#include "engine/weightlab/weight_method.h"

namespace inferscope {

const std::string& default_calibration_text() {
  static const std::string text = R"(Once upon a time, there was a little girl named Lily. She lived in a small house near a big forest with her mom and dad. Every morning, Lily liked to look out of her window and watch the birds fly from tree to tree.
One day, Lily saw a red ball in the grass. She ran outside and picked it up. The ball was soft and round. "Mom, look what I found!" she said. Her mom smiled and said, "You can play with it, but we should ask if it belongs to someone."
Lily walked to the house next door. An old man named Tom lived there. He had a big brown dog called Max. "Is this your ball?" Lily asked. Tom laughed. "Yes, it is Max's ball. He lost it yesterday. Thank you for bringing it back." Max wagged his tail and barked happily.
Tom said Lily could come and play with Max any time she wanted. From that day on, Lily and Max were best friends. They played in the garden, they ran in the park, and they rested under the big tree when they were tired.
Once there was a boy named Ben who loved to build things. He had a box full of blocks, sticks and strings. One rainy day, Ben decided to build a boat. He worked all morning. He made the boat strong and put a little flag on top.
When the rain stopped, Ben took his boat to the pond. He put it on the water and watched it float. A frog jumped on the boat and sat there like a captain. Ben laughed so hard that he fell on the grass. The frog looked at him and said, "Ribbit!"
A small cat named Mittens was very curious. She liked to climb, to jump and to look into every box she saw. One day she climbed up a tall shelf and could not get down. She was scared and began to cry. Her friend the dog heard her and called the girl who lived in the house. The girl brought a chair, reached up and held Mittens close. "You are safe now," she said. Mittens purred and licked her hand.
In a quiet village there was a baker who got up before the sun every day. He mixed flour, water and salt, and he baked warm bread for everyone. The children loved the smell of his shop. One winter, the baker was sick and could not work. The children and their parents came together. They baked the bread themselves, using his recipe, and brought a loaf to his door with a card that said, "Get well soon." The baker was so happy that he cried.
Sam and Mia were brother and sister. They did not always agree. Sam wanted to play with the train, but Mia wanted to paint. They argued and argued until their grandmother came in. "Why not paint the train?" she asked. Sam and Mia looked at each other and smiled. They painted the train blue and yellow, and it was the most beautiful train in the whole town.
The sun is a star. It gives the earth light and heat. Plants use the light of the sun to make their food, and animals eat the plants. Water goes up into the sky as vapor, makes clouds, and falls down again as rain or snow.
A computer keeps numbers in its memory. A program tells the computer what to do, one step at a time. When a program runs faster, it can do more work in the same time. Some programs make pictures, some play music, and some help people talk to each other across the world.
Once upon a time, a little bird lived in a nest at the top of a tree. The bird wanted to fly, but its wings were still small. Every day it moved its wings up and down. Its mother said, "Be patient. Your wings will grow." One bright morning, the wind was soft and warm. The little bird stood at the edge of the nest, opened its wings and jumped. It flew! It flew over the river, over the field and back to the tree, where its mother was waiting with a happy song.
There was a girl who wanted to see the moon up close. She built a tall tower of pillows and chairs. She climbed to the top and reached out her hand, but the moon was still far away. Her dad found her and laughed kindly. He gave her a small telescope. She looked through it and saw the moon's big round holes and its gray hills. "It is even better than touching it," she whispered.
In the forest, a fox and a rabbit met by the river. The fox was hungry, but the rabbit was clever. "If you help me carry these carrots home," said the rabbit, "I will give you half of my soup." The fox thought about it and agreed. They carried the carrots together, cooked a big pot of soup, and ate it under the stars. After that night, they were friends.
)";
  return text;
}

const std::string& default_eval_text() {
  static const std::string text = R"(Once upon a time, there was a small boy named Leo who had a green kite. Every windy day he took the kite to the hill behind his house. He held the string tight and ran as fast as he could, and the kite went up and up into the blue sky.
One day the wind was very strong. The kite pulled so hard that the string slipped out of Leo's hand. The kite flew away over the trees. Leo was sad and sat down on the grass. A girl named Anna saw him and asked what was wrong. "My kite is gone," said Leo.
Anna said, "Let us look for it together." They walked down the hill and into the woods. They looked under bushes and behind rocks. At last they saw the green kite stuck in the branches of an old tree. Anna found a long stick, and together they pulled the kite down gently.
The kite had a small hole, but Anna's mother helped them fix it with tape. The next day, Leo and Anna flew the kite together. This time Leo tied the string to his wrist. "Now it cannot fly away," he said, and Anna laughed.
A little duck lived by a pond with her three brothers. She was the smallest, and she could not swim as fast as they could. One afternoon, a storm came and the water became wild. The brothers were afraid, but the little duck remembered a quiet place under the big rocks. She led them there, and they waited together until the storm was over. From then on, her brothers always listened to her.
The moon goes around the earth, and the earth goes around the sun. It takes about one month for the moon to go around the earth, and one year for the earth to go around the sun. The seasons change because the earth is tilted as it travels.
Once there was a teddy bear who lived on a shelf in a toy shop. Every day children came in, but nobody picked him, because one of his ears was torn. One evening, an old woman came into the shop. She looked at the bear, smiled and said, "You look like you need a friend." She took him home, sewed his ear and gave him to her grandson, who hugged him every night.
)";
  return text;
}

}  // namespace inferscope
